package privacy

import (
	"encoding/json"
	"net/netip"
	"testing"
	"time"

	"github.com/ds4context/adapterkit/internal/vectors"
)

type embA struct {
	Name string
	Same string `json:"same"`
	Only string
}

type embB struct {
	Name string
	Same string
	Tag  string `json:"tagged"`
}

type embC struct{ Deep string }

type withEmbedded struct {
	embA
	*embB
	*embC // nil: its fields are skipped
	Own   string
	Name  string `json:"name"` // shallower: hides both embedded Name fields
	When  time.Time
	Addrs map[netip.Addr]int
	Num   json.Number
	Iface json.Marshaler
	Ptr   *int   `json:",omitempty"`
	Quote string `json:",string"`
	Arr   [3]bool
}

func TestEncodeMatchesEncodingJSON(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Enabled = false
	e := mustEngine(t, cfg)
	values := []any{
		withEmbedded{
			embA:  embA{Name: "a", Same: "sa", Only: "o"},
			embB:  &embB{Name: "b", Same: "sb", Tag: "t"},
			Own:   "own",
			Name:  "top",
			When:  time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC),
			Addrs: map[netip.Addr]int{netip.MustParseAddr("10.0.0.2"): 2, netip.MustParseAddr("10.0.0.1"): 1},
			Num:   "12.50",
			Iface: json.RawMessage(`{"z":1,"a":[true]}`),
			Quote: `say "hi"`,
		},
		map[string]any{"nested": []any{map[int8]string{-1: "m", 3: "t"}, []string{}, map[string]any{}}},
		[]*withEmbedded{nil},
		struct{ F float32 }{1.0e-7},
		struct{ U uint8 }{255},
	}
	for _, v := range values {
		got, err := e.SanitizePayload("remote", v)
		if err != nil {
			t.Fatalf("%T: %v", v, err)
		}
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if !vectors.SameJSON(t, got.Value, want) {
			t.Errorf("%T:\n got %s\nwant %s", v, got.Value, want)
		}
	}
}
