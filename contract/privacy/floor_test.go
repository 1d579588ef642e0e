package privacy

import (
	"testing"

	"github.com/ds4context/adapterkit/internal/upstream"
)

// stackConfig is a remote policy that allows sensitive content, so that
// only a local-only floor withholds allowed text.
func stackConfig() Config {
	cfg := DefaultConfig()
	cfg.RemoteDefaultAllowed = []Classification{Normal, Internal, Sensitive}
	return cfg
}

// TestMarkerStackKeepsOuterMarkerOpen is the divergence from the
// TypeScript kit that the stack fixes: after a mismatched close the outer
// marker stays open, so a later local-only pair in another string nests
// inside it and the whole payload is local-only. With one open slot the
// engine forgot the outer marker and sent the first two contents.
func TestMarkerStackKeepsOuterMarkerOpen(t *testing.T) {
	e := mustEngine(t, stackConfig())
	in := `{"messages":[{"role":"user","content":"[ds4:internal]a[ds4:sensitive]b[/ds4:internal]"},` +
		`{"role":"user","content":"public text"},` +
		`{"role":"user","content":"[ds4:local-only]c[/ds4:local-only]"}]}`
	pl := `"` + phLocal + `"`
	checkPayload(t, e, "remote-x", raw(in), payloadWant{
		`{"messages":[{"role":"user","content":` + pl + `},{"role":"user","content":` + pl + `},{"role":"user","content":` + pl + `}]}`,
		LocalOnly, true, 3, 0})
}

// TestMarkerStackFloors checks the floor of marker structures, one list of
// strings each ("" when the structure raises no floor).
func TestMarkerStackFloors(t *testing.T) {
	cases := []struct {
		name    string
		strings []string
		floor   Classification
	}{
		{"no markers", []string{"a", "b"}, ""},
		{"closed pairs", []string{"[ds4:internal]a[/ds4:internal]", "[ds4:sensitive]b[/ds4:sensitive]"}, ""},
		{"mismatched close leaves the outer open", []string{"[ds4:internal]a[ds4:normal]b[/ds4:internal]", "[ds4:local-only]c[/ds4:local-only]"}, LocalOnly},
		{"outer survives an inner close", []string{"[ds4:normal]o[ds4:normal]i[/ds4:normal]o[/ds4:normal]", "[ds4:internal]x[/ds4:internal]"}, Normal},
		{"stray close with nothing open", []string{"[/ds4:sensitive]a"}, Sensitive},
		{"split pair", []string{"[ds4:normal]a", "b[/ds4:normal]"}, Normal},
		{"split pair under an open marker", []string{"[ds4:internal]a[ds4:normal]b", "[/ds4:normal]c[/ds4:internal]"}, Internal},
		{"deep stack pops one at a time", []string{"[ds4:local-only]x[/ds4:local-only][ds4:normal][ds4:normal]", "[/ds4:normal]"}, Normal},
		{"the bottom entry stays open to the end", []string{"[ds4:sensitive][ds4:normal]", "[/ds4:normal]"}, Sensitive},
		{"open at the end, below a closed pair", []string{"[ds4:sensitive]a", "[ds4:normal]b[/ds4:normal]"}, Sensitive},
		{"escaped opens are not markers", []string{`\[ds4:local-only]a`, "[ds4:normal]b[/ds4:normal]"}, ""},
		{"close of the right class after a mismatched pop", []string{"[ds4:internal][ds4:sensitive][/ds4:normal][/ds4:internal]"}, Sensitive},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var f floorState
			for _, s := range c.strings {
				f.value(s)
			}
			if got := f.finish(); got != c.floor {
				t.Fatalf("floor %q, want %q", got, c.floor)
			}
		})
	}
}

// TestMemberNameWithUnclosedMarker checks the rule the Go kit adds to the
// TypeScript kit's: a member name anywhere in the payload holding an
// opening marker outside a closed pair raises the floor to its class, so
// the name and everything else is withheld as the same slip in a value is.
func TestMemberNameWithUnclosedMarker(t *testing.T) {
	e := mustEngine(t, DefaultConfig())
	ps, pl := `"`+phSensitive+`"`, `"`+phLocal+`"`
	cases := []struct {
		name string
		in   string
		want payloadWant
	}{
		{"unclosed marker in a name", `{"metadata":{"x [ds4:local-only]SECRET":1},"messages":[{"role":"user","content":"public"}]}`,
			payloadWant{`{"metadata":{` + pl + `:1},"messages":[{"role":"user","content":` + pl + `}]}`, LocalOnly, true, 2, 0}},
		{"leading marker in a name", `{"messages":[{"role":"user","content":"public"}],"tools":[{"input":{"[DS4:Sensitive]k":{}}}]}`,
			payloadWant{`{"messages":[{"role":"user","content":` + ps + `}],"tools":[{"input":{` + ps + `:{}}}]}`, Sensitive, true, 2, 0}},
		{"opening marker nested in a pair of a name", `{"metadata":{"[ds4:normal]a[ds4:local-only]S[/ds4:local-only]b[/ds4:normal]":1,"text":"public"}}`,
			payloadWant{`{"metadata":{` + pl + `:1,"text":` + pl + `}}`, LocalOnly, true, 2, 0}},
		{"closed pair in a name sets no floor", `{"metadata":{"[ds4:local-only]S[/ds4:local-only]":1,"note":"public"}}`,
			payloadWant{`{"metadata":{` + pl + `:1,"note":"public"}}`, LocalOnly, true, 1, 0}},
		{"escaped marker in a name sets no floor", `{"metadata":{"x \\[ds4:local-only]S":1,"note":"public"}}`,
			payloadWant{`{"metadata":{"x \\[ds4:local-only]S":1,"note":"public"}}`, Normal, false, 0, 0}},
		{"a stray close in a name sets no floor", `{"metadata":{"x [/ds4:local-only]":1,"note":"public"}}`,
			payloadWant{`{"metadata":{"x [/ds4:local-only]":1,"note":"public"}}`, Normal, false, 0, 0}},
		// The rule holds anywhere in the payload, outside content context
		// too: SPEC §8's own example sits at the root.
		{"outside content context", `{"routing":{"x [ds4:local-only]S":1},"messages":[{"role":"user","content":"public"}]}`,
			payloadWant{`{"routing":{` + pl + `:1},"messages":[{"role":"user","content":` + pl + `}]}`, LocalOnly, true, 2, 0}},
		{"at the root", `{"x [ds4:local-only]SECRET":1}`, payloadWant{`{` + pl + `:1}`, LocalOnly, true, 1, 0}},
		{"at the root beside content", `{"model":"m","[ds4:sensitive]k":{"note":"public"},"prompt":"p"}`,
			payloadWant{`{"model":"m",` + ps + `:{"note":"public"},"prompt":` + ps + `}`, Sensitive, true, 2, 0}},
		{"a closed pair at the root sets no floor", `{"[ds4:local-only]S[/ds4:local-only]":1,"prompt":"public"}`,
			payloadWant{`{` + pl + `:1,"prompt":"public"}`, LocalOnly, true, 1, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkPayload(t, e, "remote", raw(c.in), c.want) })
	}
}

// TestEngineWithoutNameFloor checks the engine package upstream gives the
// conformance checks: the TypeScript kit's floor, values only, so SPEC
// §8's example reaches a remote provider verbatim there; a value's slip is
// still withheld, and a name with a marker is still sanitised.
func TestEngineWithoutNameFloor(t *testing.T) {
	e := mustEngine(t, DefaultConfig())
	up := upstream.WithoutNameFloor(e).(*Engine)
	pl := `"` + phLocal + `"`
	checkPayload(t, up, "remote", raw(`{"x [ds4:local-only]SECRET":1}`), payloadWant{`{"x [ds4:local-only]SECRET":1}`, Normal, false, 0, 0})
	checkPayload(t, up, "remote", raw(`{"[ds4:local-only]k":1,"prompt":"p"}`), payloadWant{`{` + pl + `:1,"prompt":"p"}`, LocalOnly, true, 1, 0})
	checkPayload(t, up, "remote", raw(`{"prompt":"x [ds4:local-only]SECRET","system":"s"}`), payloadWant{`{"prompt":` + pl + `,"system":` + pl + `}`, LocalOnly, true, 2, 0})
	if !e.valuesOnly && up.valuesOnly && up.def == e.def {
		return
	}
	t.Fatal("the engine without the name floor is not a copy of the engine with only that rule left out")
}
