package contract_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/gen"
	"github.com/ds4context/adapterkit/internal/jsonw"
	"github.com/ds4context/adapterkit/internal/vectors"
	"pgregory.net/rapid"
)

// The fuzz targets run their seeds (f.Add and testdata/fuzz/<Target>) in
// every go test. Fuzz one with
//
//	go test ./contract -run='^$' -fuzz=FuzzSnapshotJSONValidation -fuzztime=60s
//
// and rewrite the generated seed files with
//
//	go test ./contract -run=TestFuzzSeeds -fuzz.update-seeds

var updateFuzzSeeds = flag.Bool("fuzz.update-seeds", false, "rewrite the generated seed corpora under testdata/fuzz")

// normalizeRaw rewrites every raw JSON value of m (arguments, opaque values
// and unknown members) as the encoder writes it, so a decoded message can be
// compared with the result of encoding and decoding it again.
func normalizeRaw(t *testing.T, m *contract.Message) {
	t.Helper()
	norm := func(raw json.RawMessage) json.RawMessage {
		if raw == nil {
			return nil
		}
		out, err := jsonw.Normalize(nil, raw)
		if err != nil {
			t.Fatalf("decoded raw value does not normalize: %v", err)
		}
		return out
	}
	fields := func(fs []contract.Field) {
		for i := range fs {
			fs[i].Value = norm(fs[i].Value)
		}
	}
	fields(m.Extra)
	fields(m.Provenance.Extra)
	fields(m.Flags.Extra)
	for _, b := range m.Blocks {
		switch b := b.(type) {
		case *contract.TextBlock:
			fields(b.Extra)
		case *contract.ThinkingBlock:
			fields(b.Extra)
		case *contract.ToolCallBlock:
			b.Arguments = norm(b.Arguments)
			fields(b.Extra)
		case *contract.ToolResultBlock:
			fields(b.Extra)
		case *contract.ImageBlock:
			fields(b.Extra)
		case *contract.FileReferenceBlock:
			fields(b.Extra)
		case *contract.ArtifactReferenceBlock:
			fields(b.Extra)
		case *contract.SummaryReferenceBlock:
			fields(b.Extra)
		case *contract.OpaqueProviderBlock:
			b.Value = norm(b.Value)
			fields(b.Extra)
		}
	}
}

func FuzzMessageJSONRoundTrip(f *testing.F) {
	for _, s := range []string{
		`{"id":"s:e1","sourceEntryId":"e1","role":"user","blocks":[],"provenance":{"source":"runtime-session","sessionId":"s","entryId":"e1","runtimeId":"rt"},"flags":{}}`,
		`{"id":"a","sourceEntryId":"a","role":"assistant","blocks":[{"type":"toolCall","id":"c","name":"n","arguments":{"b":1,"a":[1e21,-0,"\u2028"],"1":null}}],"provenance":{"source":"pi-session","sessionId":"s","entryId":"a"},"flags":{"pinned":true},"x":{"y":[]}}`,
		`{"ID":"x","id":"y","sourceEntryId":"","role":"custom","blocks":[{"type":"opaqueProvider","value":1e400}],"provenance":{"source":"runtime-session","sessionId":"","entryId":""},"flags":{}}`,
		`{"id":"\ud800","sourceEntryId":"e","role":"tool","blocks":[{"type":"toolResult","toolCallId":"c","toolName":"t","content":"","isError":false,"extra":1E+2}],"provenance":{"source":"runtime-session","sessionId":"s","entryId":"e","other":true},"flags":{"x":1},"createdAt":1.5e-7,"tokenEstimate":0}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := contract.DecodeMessage(data)
		shared, serr := contract.DecodeMessageString(string(data))
		if (err == nil) != (serr == nil) || err != nil && err.Error() != serr.Error() || !reflect.DeepEqual(shared, m) {
			t.Fatalf("DecodeMessageString differs from DecodeMessage: %v, %v\n got %#v\nwant %#v", serr, err, shared, m)
		}
		if err != nil {
			return
		}
		enc, err := contract.AppendMessageJSON(nil, &m)
		if err != nil {
			t.Fatalf("decoded message does not encode: %v", err)
		}
		m2, err := contract.DecodeMessage(enc)
		if err != nil {
			t.Fatalf("encoded message does not decode: %v", err)
		}
		normalizeRaw(t, &m)
		if !reflect.DeepEqual(m2, m) {
			t.Fatalf("encoding and decoding changed the message:\n got %#v\nwant %#v", m2, m)
		}
		enc2, err := contract.AppendMessageJSON(nil, &m2)
		if err != nil || !bytes.Equal(enc2, enc) {
			t.Fatalf("encoding is not stable: %s then %s (%v)", enc, enc2, err)
		}
	})
}

func FuzzSnapshotJSONValidation(f *testing.F) {
	for _, s := range []string{
		`{"schemaVersion":"runtime-history-v1","runtimeId":"r","sessionId":"s","revision":"1","projectRoot":"/p","messages":[],"toolAtomicGroups":[]}`,
		`{"schemaVersion":"","runtimeId":" ","sessionId":"s","revision":"1","projectRoot":"","messages":[{"id":"s:e1","sourceEntryId":"e1","role":"assistant","blocks":[{"type":"toolCall","id":"c","name":"n"},{"type":"toolCall","id":"c","name":"n"}],"provenance":{"source":"runtime-session","sessionId":"s","entryId":"e1"},"flags":{}}],"toolAtomicGroups":[{"id":"","messageIds":["s:e1","s:e1","x"],"toolCallIds":["c","c","d"],"complete":true}],"extra":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var s contract.HistorySnapshot
		if err := s.UnmarshalJSON(data); err != nil {
			return
		}
		issues := contract.ValidateHistorySnapshot(&s)
		_ = contract.BuildToolAtomicGroups(s.Messages)
		enc, err := contract.AppendSnapshotJSON(nil, &s)
		if err != nil {
			t.Fatalf("decoded snapshot does not encode: %v", err)
		}
		var s2 contract.HistorySnapshot
		if err := s2.UnmarshalJSON(enc); err != nil {
			t.Fatalf("encoded snapshot does not decode: %v", err)
		}
		if again := contract.ValidateHistorySnapshot(&s2); !reflect.DeepEqual(again, issues) {
			t.Fatalf("validation changed after a round trip:\n got %+v\nwant %+v", again, issues)
		}
		for i := range s.Messages {
			normalizeRaw(t, &s.Messages[i])
		}
		if !reflect.DeepEqual(s2, s) {
			t.Fatalf("encoding and decoding changed the snapshot")
		}
		enc2, err := contract.AppendSnapshotJSON(nil, &s2)
		if err != nil || !bytes.Equal(enc2, enc) {
			t.Fatalf("encoding is not stable (%v)", err)
		}
	})
}

// fuzzSeeds returns the generated seed inputs of each fuzz target: the
// snapshots of the validation vectors, generated valid snapshots and one
// snapshot per mutation, and their messages.
func fuzzSeeds(t *testing.T) map[string][][]byte {
	t.Helper()
	var snapshots []contract.HistorySnapshot
	for _, v := range vectors.Read(t, "validate.jsonl") {
		var in struct {
			Snapshot contract.HistorySnapshot `json:"snapshot"`
		}
		if err := json.Unmarshal(v.Input, &in); err != nil {
			t.Fatal(err)
		}
		snapshots = append(snapshots, in.Snapshot)
	}
	g := gen.SnapshotOf(gen.SnapshotOptions{MinMessages: 3, MaxMessages: 10})
	for seed := range 8 {
		snapshots = append(snapshots, g.Example(seed))
	}
	for i, m := range gen.Mutations {
		s := g.Example(100 + i)
		for k := 0; !m.Apply(&s) && k < 50; k++ {
			s = g.Example(1000 + 50*i + k)
		}
		snapshots = append(snapshots, s)
	}
	seeds := map[string][][]byte{}
	seen := map[string]bool{}
	for _, s := range snapshots {
		enc, err := contract.AppendSnapshotJSON(nil, &s)
		if err != nil {
			t.Fatal(err)
		}
		seeds["FuzzSnapshotJSONValidation"] = append(seeds["FuzzSnapshotJSONValidation"], enc)
		for i := range s.Messages {
			enc, err := contract.AppendMessageJSON(nil, &s.Messages[i])
			if err != nil {
				t.Fatal(err)
			}
			if !seen[string(enc)] && len(seeds["FuzzMessageJSONRoundTrip"]) < 60 {
				seen[string(enc)] = true
				seeds["FuzzMessageJSONRoundTrip"] = append(seeds["FuzzMessageJSONRoundTrip"], enc)
			}
		}
	}
	return seeds
}

// TestFuzzSeeds checks that the committed seed corpora hold the generated
// seeds (rewriting them with -fuzz.update-seeds), so the corpora follow the
// vectors and generators.
func TestFuzzSeeds(t *testing.T) {
	for target, inputs := range fuzzSeeds(t) {
		for i, in := range inputs {
			path := filepath.Join("testdata", "fuzz", target, "gen-"+fmt.Sprintf("%03d", i))
			want := "go test fuzz v1\n[]byte(" + strconv.Quote(string(in)) + ")\n"
			if *updateFuzzSeeds {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (rewrite the seeds with -fuzz.update-seeds)", err)
			}
			if string(got) != want {
				t.Errorf("%s is not the current generated seed (rewrite the seeds with -fuzz.update-seeds)", path)
			}
		}
	}
}

// FuzzGeneratedSnapshots drives the contract/gen generators with the fuzzer's
// bytes instead of rapid's random source, so coverage guidance explores
// generated histories: a mutated snapshot must yield exactly its codes, and
// its JSON must round-trip.
func FuzzGeneratedSnapshots(f *testing.F) {
	for _, seed := range [][]byte{{}, {1, 2, 3, 4, 5, 6, 7, 8}, bytes.Repeat([]byte{0x5a, 0xff, 0x13, 0x80}, 64)} {
		f.Add(seed)
	}
	f.Fuzz(rapid.MakeFuzz(func(t *rapid.T) {
		m := gen.MutatedSnapshot().Draw(t, "mutant")
		if got := distinctCodes(contract.ValidateHistorySnapshot(&m.Snapshot)); !slices.Equal(got, m.Codes) {
			t.Fatalf("mutation %s: codes %v, want %v", m.Mutation, got, m.Codes)
		}
		enc, err := contract.AppendSnapshotJSON(nil, &m.Snapshot)
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		var back contract.HistorySnapshot
		if err := back.UnmarshalJSON(enc); err != nil {
			t.Fatalf("decode: %v", err)
		}
		if !reflect.DeepEqual(back, m.Snapshot) {
			t.Fatalf("round trip changed the mutated snapshot")
		}
	}))
}
