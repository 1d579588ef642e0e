package gen

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/internal/jsstring"
)

// stringsOf returns every string of v, a decoded JSON value: member names
// and string values.
func stringsOf(v any, out []string) []string {
	switch v := v.(type) {
	case string:
		return append(out, v)
	case []any:
		for _, x := range v {
			out = stringsOf(x, out)
		}
	case map[string]any:
		for k, x := range v {
			out = stringsOf(x, append(out, k))
		}
	}
	return out
}

func historyStrings(t *testing.T, h []contract.Message) []string {
	t.Helper()
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return stringsOf(v, nil)
}

// The projection check hands an adapter the histories of seeds 1 to 20
// (HistoryWithout with no family left out is History): every class of
// stringClasses shows in them, and every history stays valid. Over 200
// short histories, each place a class is drawn into shows one: entry and tool
// call ids blank to Go alone or ending in whitespace, tool names, mime
// types and providers a normaliser changes.
func TestStringClassesReachTheProjectionHistories(t *testing.T) {
	const runtimeID, sessionID = "conformance-runtime", "runtime-adapter-conformance-session"
	classes := map[string]int{}
	var goBlankEntries, goBlankCalls, spaceEnds, oddTools, oddMimes, oddProviders int
	for seed := 1; seed <= 200; seed++ {
		g := History(runtimeID, sessionID)
		if seed > 20 {
			// Short histories only, to keep the test quick.
			g = HistoryOf(HistoryOptions{RuntimeID: runtimeID, SessionID: sessionID, MaxMessages: smallMax})
		}
		h := g.Example(seed)
		s := contract.HistorySnapshot{SchemaVersion: contract.HistorySchemaVersion, RuntimeID: runtimeID, SessionID: sessionID,
			Revision: "1", ProjectRoot: "/p", Messages: h, ToolAtomicGroups: contract.BuildToolAtomicGroups(h)}
		if issues := contract.ValidateHistorySnapshot(&s); len(issues) != 0 {
			t.Fatalf("seed %d: %+v", seed, issues)
		}
		for _, str := range historyStrings(t, h) {
			if seed > 20 {
				break
			}
			for _, c := range stringClasses {
				for _, p := range c.pieces {
					if strings.Contains(str, p) {
						classes[c.name]++
					}
				}
			}
		}
		for i := range h {
			m := &h[i]
			if strings.TrimSpace(m.SourceEntryID) == "" {
				goBlankEntries++
			}
			if jsstring.Trim(m.SourceEntryID) != m.SourceEntryID {
				spaceEnds++
			}
			if m.Provider != nil && (jsstring.Trim(*m.Provider) != *m.Provider || jsstring.Lower(*m.Provider) != *m.Provider || strings.ToLower(*m.Provider) != *m.Provider) {
				oddProviders++
			}
			for _, b := range m.Blocks {
				switch b := b.(type) {
				case *contract.ToolCallBlock:
					if strings.TrimSpace(b.ID) == "" {
						goBlankCalls++
					}
					if slices.Contains(oddToolNames, b.Name) {
						oddTools++
					}
				case *contract.ImageBlock:
					if b.MimeType != nil && slices.Contains(oddMimeTypes, *b.MimeType) {
						oddMimes++
					}
				}
			}
		}
	}
	t.Logf("pieces by class in 20 histories %v; in 200 short ones: entry ids blank to Go %d, ids ending in whitespace %d; call ids blank to Go %d; odd tool names %d, mime types %d, providers %d",
		classes, goBlankEntries, spaceEnds, goBlankCalls, oddTools, oddMimes, oddProviders)
	for _, c := range stringClasses {
		if classes[c.name] == 0 {
			t.Errorf("no %s in the projection's histories", c.name)
		}
	}
	for what, n := range map[string]int{"entry id blank to strings.TrimSpace": goBlankEntries, "tool call id blank to strings.TrimSpace": goBlankCalls,
		"entry id ending in whitespace": spaceEnds, "odd tool name": oddTools, "odd mime type": oddMimes, "provider a normaliser changes": oddProviders} {
		if n == 0 {
			t.Errorf("no %s in 200 histories", what)
		}
	}
}
