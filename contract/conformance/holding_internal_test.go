package conformance

import (
	"bytes"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/gen"
)

// encodeAll is the wire JSON of msgs, one message after another.
func encodeAll(t *testing.T, msgs []contract.Message) []byte {
	t.Helper()
	var b []byte
	for i := range msgs {
		var err error
		if b, err = contract.AppendMessageJSON(b, &msgs[i]); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// The holding judge works on copies: judging a held history that dropped
// every unknown member (message, provenance, flags and block extras)
// leaves the given history as it was, and finds the difference.
func TestJudgingHeldHistoriesLeavesTheGivenOnesAlone(t *testing.T) {
	fx := NewFixture()
	found := false
	for seed := range 60 {
		given := gen.History(fx.RuntimeID, fx.SessionID).Example(seed)
		before := encodeAll(t, given)
		held := contract.CloneMessages(given)
		for i := range held {
			m := &held[i]
			m.Extra, m.Provenance.Extra, m.Flags.Extra = nil, nil, nil
			for _, b := range m.Blocks {
				*blockExtraOf(b) = nil
			}
		}
		ds, _, _ := classifyHeld(fx.Model, given, held)
		for _, d := range ds {
			found = found || d == HoldingUnknownMembersDropped
		}
		if !bytes.Equal(before, encodeAll(t, given)) {
			t.Fatalf("seed %d: judging changed the given history", seed)
		}
	}
	if !found {
		t.Fatal("no history held unknown members: the test shows nothing")
	}
}
