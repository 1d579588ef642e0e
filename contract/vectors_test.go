package contract_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/internal/vectors"
)

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestGroupVectors(t *testing.T) {
	for _, v := range vectors.Read(t, "groups.jsonl") {
		t.Run(v.Name, func(t *testing.T) {
			var in struct {
				Messages []contract.Message `json:"messages"`
			}
			if err := json.Unmarshal(v.Input, &in); err != nil {
				t.Fatal(err)
			}
			got := contract.BuildToolAtomicGroups(in.Messages)
			var want []contract.ToolAtomicGroup
			if err := json.Unmarshal(v.Output, &want); err != nil {
				t.Fatal(err)
			}
			if v.Name == "ids-sort-order" {
				// The one documented deviation: the TypeScript kit orders groups
				// with the host locale's collation; the Go kit orders bytewise.
				byFirst := func(a, b contract.ToolAtomicGroup) int { return strings.Compare(a.MessageIDs[0], b.MessageIDs[0]) }
				if !slices.IsSortedFunc(got, byFirst) {
					t.Errorf("groups are not in byte order of their first message id")
				}
				slices.SortStableFunc(want, byFirst)
			}
			if !vectors.SameJSON(t, mustJSON(t, got), mustJSON(t, want)) {
				t.Errorf("groups differ\n got %s\nwant %s", mustJSON(t, got), v.Output)
			}
		})
	}
}

// groupOrderCodes are the validation codes whose order follows group order.
var groupOrderCodes = map[string]bool{
	contract.CodeToolAtomicGroupMissing:  true,
	contract.CodeToolAtomicGroupMismatch: true,
	contract.CodeToolAtomicCallUnknown:   true,
}

func TestValidateVectors(t *testing.T) {
	for _, v := range vectors.Read(t, "validate.jsonl") {
		t.Run(v.Name, func(t *testing.T) {
			var in struct {
				Snapshot contract.HistorySnapshot `json:"snapshot"`
			}
			if err := json.Unmarshal(v.Input, &in); err != nil {
				t.Fatal(err)
			}
			got := contract.ValidateHistorySnapshot(&in.Snapshot)
			var want []contract.ValidationIssue
			if err := json.Unmarshal(v.Output, &want); err != nil {
				t.Fatal(err)
			}
			// Issues of the group-order steps compare as a multiset (the
			// TypeScript kit's group order depends on the host locale);
			// every other issue compares in order.
			split := func(is []contract.ValidationIssue) (ordered, grouped []string) {
				for _, i := range is {
					s := string(mustJSON(t, i))
					if groupOrderCodes[i.Code] {
						grouped = append(grouped, s)
					} else {
						ordered = append(ordered, s)
					}
				}
				slices.Sort(grouped)
				return
			}
			go1, gg := split(got)
			wo, wg := split(want)
			if !slices.Equal(go1, wo) || !slices.Equal(gg, wg) {
				t.Errorf("issues differ\n got %s\nwant %s", mustJSON(t, got), v.Output)
			}
		})
	}
}

func TestNegotiateVectors(t *testing.T) {
	for _, v := range vectors.Read(t, "negotiate.jsonl") {
		t.Run(v.Name, func(t *testing.T) {
			var in struct {
				Declarations []contract.CapabilityDeclaration `json:"declarations"`
				Requested    []contract.CapabilityRequest     `json:"requested"`
			}
			if err := json.Unmarshal(v.Input, &in); err != nil {
				t.Fatal(err)
			}
			got := contract.NegotiateCapabilities(in.Declarations, in.Requested)
			if !vectors.SameJSON(t, mustJSON(t, got), v.Output) {
				t.Errorf("negotiation differs\n got %s\nwant %s", mustJSON(t, got), v.Output)
			}
		})
	}
}
