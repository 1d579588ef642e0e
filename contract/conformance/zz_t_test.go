package conformance

import (
	"testing"
	"time"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/gen"
)

func TestZZCost(t *testing.T) {
	fx := NewFixture()
	t0 := time.Now()
	var ms []contract.Message
	for range 5 {
		ms = gen.SyntheticHistory{RuntimeID: fx.RuntimeID, SessionID: fx.SessionID}.Messages(modelLongestHistory)
	}
	t.Log("gen", time.Since(t0)/5)
	t0 = time.Now()
	for range 5 {
		_ = contract.CloneMessages(ms)
	}
	t.Log("clone", time.Since(t0)/5)
	t0 = time.Now()
	for range 5 {
		_ = contentKey(ms)
	}
	t.Log("key", time.Since(t0)/5)
	t0 = time.Now()
	for range 5 {
		_, _ = describeMessages(ms, contract.CloneMessages(ms))
	}
	t.Log("describe+clone", time.Since(t0)/5)
	snap := contract.HistorySnapshot{Messages: ms, ToolAtomicGroups: contract.BuildToolAtomicGroups(ms)}
	t0 = time.Now()
	for range 5 {
		_ = contract.ValidateHistorySnapshot(&snap)
	}
	t.Log("validate", time.Since(t0)/5)
}
