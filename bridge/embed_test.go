package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/reference"
)

// lengthEmbedder embeds a text as its length and its first byte.
type lengthEmbedder struct{}

func (lengthEmbedder) Identity() contract.EmbeddingIdentity {
	return contract.EmbeddingIdentity{Provider: "test", Model: "length-2", Dimensions: 2, Destination: contract.DestinationLocal}
}

func (lengthEmbedder) Embed(_ context.Context, texts []string) ([][]float64, error) {
	out := make([][]float64, len(texts))
	for i, t := range texts {
		first := 0.0
		if t != "" {
			first = float64(t[0])
		}
		out[i] = []float64{float64(len(t)), first}
	}
	return out, nil
}

func init() {
	childServers["serve-reference-embeddings"] = func() conformance.Factory {
		return reference.NewConformanceFactory(reference.WithEmbeddingPort(lengthEmbedder{}))
	}
}

// An embedding port crosses the bridge — in process over pipes and in a
// child process — with its identity and its vectors; an adapter without
// one has none over the bridge either.
func TestEmbeddingPortCrossesTheBridge(t *testing.T) {
	checkGoroutines(t)
	ctx := context.Background()
	texts := []string{"alpha", "a longer second text", "", "z"}
	want, _ := lengthEmbedder{}.Embed(ctx, texts)
	for name, f := range map[string]conformance.Factory{
		"pipe":    Pipe(reference.NewConformanceFactory(reference.WithEmbeddingPort(lengthEmbedder{})), Options{}),
		"process": childFactory("serve-reference-embeddings", Options{}),
	} {
		inst, err := f.Create(ctx, conformance.Setup{Fixture: conformance.NewFixture(), Transport: conformance.NewRecordingTransport()})
		if err != nil {
			t.Fatal(err)
		}
		port := inst.Adapter.(contract.EmbeddingPortProvider).EmbeddingPort()
		if port == nil {
			t.Fatalf("%s: no embedding port", name)
		}
		if id := port.Identity(); id != (lengthEmbedder{}).Identity() {
			t.Errorf("%s: identity %+v", name, id)
		}
		got, err := port.Embed(ctx, texts)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: vectors %v (%v), want %v", name, got, err, want)
		}
		if got, err := port.Embed(ctx, nil); err != nil || len(got) != 0 {
			t.Errorf("%s: no texts: %v, %v", name, got, err)
		}
		if err := inst.Cleanup(ctx); err != nil {
			t.Fatal(err)
		}
	}
	inst, err := Pipe(reference.NewConformanceFactory(), Options{}).Create(ctx, conformance.Setup{Fixture: conformance.NewFixture(), Transport: conformance.NewRecordingTransport()})
	if err != nil {
		t.Fatal(err)
	}
	if port := inst.Adapter.(contract.EmbeddingPortProvider).EmbeddingPort(); port != nil {
		t.Errorf("an adapter without a port has %T over the bridge", port)
	}
	if err := inst.Cleanup(ctx); err != nil {
		t.Fatal(err)
	}
}

// A port that declares maxBatch gets the texts in consecutive embed
// requests of at most that many, and the vectors come back joined in
// order; a batch answered with the wrong number of vectors is an error.
func TestEmbedSplitsIntoDeclaredBatches(t *testing.T) {
	checkGoroutines(t)
	ctx := context.Background()
	c, s := newScripted(t)
	go func() {
		env := s.read()
		s.write(`{"id":%d,"result":{"protocol":"runtime-adapter-bridge-v1","factory":"scripted"}}`, env.ID)
		env = s.read()
		s.write(`{"id":%d,"result":{"instance":"i","expectedProjectRoot":"/r","embeddingPort":{"provider":"p","model":"m","dimensions":1,"destination":"remote","maxBatch":2}}}`, env.ID)
	}()
	if _, err := c.Hello(ctx); err != nil {
		t.Fatal(err)
	}
	inst, err := c.Create(ctx, conformance.Setup{Fixture: conformance.NewFixture(), Transport: conformance.NewRecordingTransport()})
	if err != nil {
		t.Fatal(err)
	}
	port := inst.Adapter.(contract.EmbeddingPortProvider).EmbeddingPort()
	want := contract.EmbeddingIdentity{Provider: "p", Model: "m", Dimensions: 1, Destination: contract.DestinationRemote}
	if port == nil || port.Identity() != want {
		t.Fatalf("port %v", port)
	}
	var sizes []int
	answer := func(short bool) {
		for range 3 {
			env := s.read()
			var p embedParams
			if env.Method != MethodEmbed || json.Unmarshal(env.Params, &p) != nil || p.Instance != "i" {
				t.Errorf("request %+v", env)
			}
			sizes = append(sizes, len(p.Texts))
			vecs := make([][]float64, len(p.Texts))
			for i, text := range p.Texts {
				vecs[i] = []float64{float64(text[0])}
			}
			if short {
				vecs = vecs[1:]
			}
			b, _ := json.Marshal(vecs)
			s.write(`{"id":%d,"result":%s}`, env.ID, b)
			if short {
				return
			}
		}
	}
	go answer(false)
	got, err := port.Embed(ctx, []string{"a", "b", "c", "d", "e"})
	if err != nil || !reflect.DeepEqual(got, [][]float64{{'a'}, {'b'}, {'c'}, {'d'}, {'e'}}) || !reflect.DeepEqual(sizes, []int{2, 2, 1}) {
		t.Fatalf("vectors %v (%v) in batches of %v", got, err, sizes)
	}
	go answer(true)
	if _, err := port.Embed(ctx, []string{"a", "b", "c"}); !errors.Is(err, ErrProtocol) {
		t.Fatalf("a short batch: %v, want ErrProtocol", err)
	}
}
