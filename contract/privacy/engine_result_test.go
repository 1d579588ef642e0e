package privacy

import (
	"testing"

	"github.com/ds4context/adapterkit/contract"
)

func TestResultForProvider(t *testing.T) {
	e, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.SanitizePayload("remote-x", map[string]any{"content": "[ds4:local-only]x[/ds4:local-only] sk-abcdefgh12345678"})
	if err != nil {
		t.Fatal(err)
	}
	got := r.ForProvider("remote-x")
	if got.Provider != "remote-x" || got.Destination != contract.DestinationRemote || string(got.Payload) != string(r.Value) ||
		!got.Changed || got.BlockedBlocks != 1 || got.SecretRedactions != 1 {
		t.Errorf("ForProvider = %+v from %+v", got, r)
	}
}
