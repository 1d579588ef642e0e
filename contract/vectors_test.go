package contract_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/contract"
)

// vector is one line of a testdata/vectors file: an input computed by the
// TypeScript kit and the output it produced.
type vector struct {
	Name   string          `json:"name"`
	Input  json.RawMessage `json:"input"`
	Output json.RawMessage `json:"output"`
}

func readVectors(t *testing.T, file string) []vector {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "vectors", file))
	if err != nil {
		t.Fatal(err)
	}
	var out []vector
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var v vector
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no vectors", file)
	}
	return out
}

// jsonEqual compares two JSON documents as values.
func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("invalid JSON %s: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("invalid JSON %s: %v", b, err)
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return bytes.Equal(ja, jb)
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestGroupVectors(t *testing.T) {
	for _, v := range readVectors(t, "groups.jsonl") {
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
			if !jsonEqual(t, mustJSON(t, got), mustJSON(t, want)) {
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
	for _, v := range readVectors(t, "validate.jsonl") {
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
	for _, v := range readVectors(t, "negotiate.jsonl") {
		t.Run(v.Name, func(t *testing.T) {
			var in struct {
				Declarations []contract.CapabilityDeclaration `json:"declarations"`
				Requested    []contract.CapabilityRequest     `json:"requested"`
			}
			if err := json.Unmarshal(v.Input, &in); err != nil {
				t.Fatal(err)
			}
			got := contract.NegotiateCapabilities(in.Declarations, in.Requested)
			if !jsonEqual(t, mustJSON(t, got), v.Output) {
				t.Errorf("negotiation differs\n got %s\nwant %s", mustJSON(t, got), v.Output)
			}
		})
	}
}
