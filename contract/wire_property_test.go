package contract_test

import (
	"bytes"
	"encoding/json"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/gen"
	"github.com/ds4context/adapterkit/internal/race"
	"pgregory.net/rapid"
)

func TestPropertyMessageJSONRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := gen.Message("rt", "s").Draw(t, "message")
		data, err := contract.AppendMessageJSON(nil, &m)
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		got, err := contract.DecodeMessage(data)
		if err != nil {
			t.Fatalf("decode %s: %v", data, err)
		}
		if diff := cmp.Diff(m, got); diff != "" {
			t.Fatalf("round trip changed the message (-want +got):\n%s", diff)
		}
		again, err := contract.AppendMessageJSON(nil, &got)
		if err != nil || !bytes.Equal(again, data) {
			t.Fatalf("re-encoding gave different bytes (%v)", err)
		}
	})
}

func TestPropertySnapshotJSONRoundTrip(t *testing.T) {
	race.SkipSequential(t)
	rapid.Check(t, func(t *rapid.T) {
		s := gen.Snapshot().Draw(t, "snapshot")
		data, err := s.MarshalJSON()
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		var got contract.HistorySnapshot
		if err := got.UnmarshalJSON(data); err != nil {
			t.Fatalf("decode: %v", err)
		}
		if diff := cmp.Diff(s, got); diff != "" {
			t.Fatalf("round trip changed the snapshot (-want +got):\n%s", diff)
		}
		// Through encoding/json too: it calls the same methods but
		// HTML-escapes their output, which raw values keep verbatim, so
		// compare what the snapshot encodes to.
		viaStd, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("json.Marshal: %v", err)
		}
		var std contract.HistorySnapshot
		if err := json.Unmarshal(viaStd, &std); err != nil {
			t.Fatalf("json.Unmarshal: %v", err)
		}
		if back, err := contract.AppendSnapshotJSON(nil, &std); err != nil || !bytes.Equal(back, data) {
			t.Fatalf("encoding/json round trip changed the snapshot's JSON (%v)", err)
		}
	})
}

// Decoders are kept for reuse between documents. What a decode returns
// shares nothing with its document or with any later decode: messages
// decoded on many goroutines at once, each document overwritten as soon as
// it is decoded, still equal their originals.
func TestPropertyDecodesShareNothing(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		msgs := rapid.SliceOfN(gen.Message("rt", "s"), 1, 8).Draw(t, "messages")
		docs := make([][]byte, len(msgs))
		for i := range msgs {
			var err error
			if docs[i], err = contract.AppendMessageJSON(nil, &msgs[i]); err != nil {
				t.Fatal(err)
			}
		}
		const workers = 4
		got := make([][]contract.Message, workers)
		errs := make([]error, workers)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for k := range msgs {
					i := (k + w) % len(msgs)
					doc := bytes.Clone(docs[i])
					m, err := contract.DecodeMessage(doc)
					if err != nil {
						errs[w] = err
						return
					}
					for j := range doc {
						doc[j] = '"'
					}
					got[w] = append(got[w], m)
				}
			})
		}
		wg.Wait()
		for w := range workers {
			if errs[w] != nil {
				t.Fatal(errs[w])
			}
			for k, m := range got[w] {
				if diff := cmp.Diff(msgs[(k+w)%len(msgs)], m); diff != "" {
					t.Fatalf("worker %d, decode %d: the message changed after later decodes (-want +got):\n%s", w, k, diff)
				}
			}
		}
	})
}
