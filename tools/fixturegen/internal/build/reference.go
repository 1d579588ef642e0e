package build

import (
	"bytes"
	"fmt"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/fixtures"
	"github.com/ds4context/adapterkit/reference"
)

// referenceRecordType is the header record type of reference history files.
const referenceRecordType = reference.HeaderType

// corruption is one reference JSONL fixture derived from the valid file by
// a byte edit.
type corruption struct {
	name, description string
	outcome           string
	diagnostic        string
	codes             []string
	// edit returns the corrupted file from the valid file's lines (each
	// without its '\n'; line 0 is the header).
	edit func(lines [][]byte) ([]byte, error)
}

const (
	diagRead     = "canonical-history-read-failed"
	diagIdentity = "canonical-history-identity-mismatch"
	diagInvalid  = "canonical-history-invalid"
)

// join writes lines, each terminated by '\n'.
func join(lines [][]byte) []byte {
	var b []byte
	for _, l := range lines {
		b = append(append(b, l...), '\n')
	}
	return b
}

// replaceLine returns lines with line i replaced by the result of replacing
// old with new in it; it fails when old is not there, so that a change of
// the valid file cannot silently turn a corruption into a no-op.
func replaceLine(lines [][]byte, i int, old, new string) ([][]byte, error) {
	if !bytes.Contains(lines[i], []byte(old)) {
		return nil, fmt.Errorf("build: line %d does not contain %q", i+1, old)
	}
	out := append([][]byte(nil), lines...)
	out[i] = bytes.Replace(lines[i], []byte(old), []byte(new), 1)
	return out, nil
}

func replaced(i int, old, new string) func([][]byte) ([]byte, error) {
	return func(lines [][]byte) ([]byte, error) {
		out, err := replaceLine(lines, i, old, new)
		if err != nil {
			return nil, err
		}
		return join(out), nil
	}
}

// The valid file is the all-block-types history: line 1 is the header,
// then e1 (system), pi-1, e3 (two calls), e4 (their results), e5, e6.
func corruptions() []corruption {
	headerRoot := `"projectRoot":` + string(str(fixtures.ProjectRoot))
	provenanceE1 := `"provenance":{"source":"runtime-session","sessionId":"fixture-session","entryId":"e1","runtimeId":"fixture-runtime"},`
	return []corruption{
		{name: "empty-file", description: "A file of zero bytes.", outcome: fixtures.OutcomeCorrupt, diagnostic: diagRead,
			edit: func([][]byte) ([]byte, error) { return []byte{}, nil }},
		{name: "unterminated-final-record", description: "The last record lacks its final newline.", outcome: fixtures.OutcomeCorrupt, diagnostic: diagRead,
			edit: func(lines [][]byte) ([]byte, error) { b := join(lines); return b[:len(b)-1], nil }},
		{name: "header-malformed", description: "The header line is truncated JSON.", outcome: fixtures.OutcomeCorrupt, diagnostic: diagRead,
			edit: func(lines [][]byte) ([]byte, error) {
				out := append([][]byte(nil), lines...)
				out[0] = lines[0][:len(lines[0])/2]
				return join(out), nil
			}},
		{name: "header-wrong-type", description: "The header's record type is not " + referenceRecordType + ".", outcome: fixtures.OutcomeCorrupt, diagnostic: diagRead,
			edit: replaced(0, `"type":"`+referenceRecordType+`"`, `"type":"ds4-runtime-session-v2"`)},
		{name: "header-missing-session-id", description: "The header has no sessionId member.", outcome: fixtures.OutcomeCorrupt, diagnostic: diagRead,
			edit: replaced(0, `"sessionId":"fixture-session",`, ``)},
		{name: "header-root-unresolvable", description: "The header's project root does not exist.", outcome: fixtures.OutcomeCorrupt, diagnostic: diagRead,
			edit: replaced(0, headerRoot, `"projectRoot":"/adapterkit-fixture/missing-root"`)},
		{name: "record-wrong-type", description: "A record whose type is not \"message\".", outcome: fixtures.OutcomeCorrupt, diagnostic: diagRead,
			edit: replaced(1, `{"type":"message",`, `{"type":"note",`)},
		{name: "record-type-overridden", description: "A message record with a later \"type\" member that wins, as in JSON.parse.", outcome: fixtures.OutcomeCorrupt, diagnostic: diagRead,
			edit: func(lines [][]byte) ([]byte, error) {
				out := append([][]byte(nil), lines...)
				out[1] = append(bytes.TrimSuffix(bytes.Clone(lines[1]), []byte("}")), `,"type":"note"}`...)
				return join(out), nil
			}},
		{name: "record-malformed-json", description: "A record line cut in the middle.", outcome: fixtures.OutcomeCorrupt, diagnostic: diagRead,
			edit: func(lines [][]byte) ([]byte, error) {
				out := append([][]byte(nil), lines...)
				out[2] = lines[2][:len(lines[2])/2]
				return join(out), nil
			}},
		{name: "blank-line", description: "An empty line between two records.", outcome: fixtures.OutcomeCorrupt, diagnostic: diagRead,
			edit: func(lines [][]byte) ([]byte, error) {
				out := append(append(append([][]byte(nil), lines[:2]...), []byte{}), lines[2:]...)
				return join(out), nil
			}},
		{name: "unknown-block-type", description: "A block whose type is not one of the nine.", outcome: fixtures.OutcomeCorrupt, diagnostic: diagRead,
			edit: replaced(1, `{"type":"text","text":"System prompt."}`, `{"type":"video","text":"System prompt."}`)},
		{name: "missing-provenance", description: "A message without its provenance member.", outcome: fixtures.OutcomeCorrupt, diagnostic: diagRead,
			edit: replaced(1, provenanceE1, ``)},
		{name: "invalid-utf8", description: "A byte sequence that is not UTF-8 inside a text.", outcome: fixtures.OutcomeCorrupt, diagnostic: diagRead,
			edit: replaced(1, `System prompt.`, "System \xff prompt.")},
		{name: "header-runtime-mismatch", description: "The header names another runtime than the adapter's.", outcome: fixtures.OutcomeIdentityMismatch, diagnostic: diagIdentity,
			edit: replaced(0, `"runtimeId":"`+fixtures.HistoryRuntimeID+`"`, `"runtimeId":"other-runtime"`)},
		{name: "header-root-elsewhere", description: "The header names an existing project root other than the adapter's.", outcome: fixtures.OutcomeIdentityMismatch, diagnostic: diagIdentity,
			edit: replaced(0, headerRoot, `"projectRoot":"/"`)},
		{name: "header-session-id-blank", description: "A header whose session id is blank, and no messages.", outcome: fixtures.OutcomeInvalid, diagnostic: diagInvalid,
			codes: []string{contract.CodeHistoryIdentityInvalid},
			edit: func(lines [][]byte) ([]byte, error) {
				out, err := replaceLine(lines, 0, `"sessionId":"fixture-session"`, `"sessionId":" "`)
				if err != nil {
					return nil, err
				}
				return join(out[:1]), nil
			}},
		{name: "reused-tool-call-id", description: "A second call with the id of an earlier call.", outcome: fixtures.OutcomeInvalid, diagnostic: diagInvalid,
			codes: []string{contract.CodeToolCallIdentityInvalid},
			edit: func(lines [][]byte) ([]byte, error) {
				again := msg("e7", contract.RoleAssistant, call("call-all", "read", `{"path":"main.go"}`))
				rec, err := contract.AppendMessageJSON([]byte(`{"type":"message","message":`), &again)
				if err != nil {
					return nil, err
				}
				return join(append(append([][]byte(nil), lines...), append(rec, '}'))), nil
			}},
		{name: "duplicate-message-id", description: "The last message appended twice.", outcome: fixtures.OutcomeInvalid, diagnostic: diagInvalid,
			codes: []string{contract.CodeHistoryMessageIDDuplicate},
			edit: func(lines [][]byte) ([]byte, error) {
				return join(append(append([][]byte(nil), lines...), lines[len(lines)-1])), nil
			}},
		{name: "provenance-mismatch", description: "A message whose provenance names another session.", outcome: fixtures.OutcomeInvalid, diagnostic: diagInvalid,
			codes: []string{contract.CodeHistoryProvenanceInvalid},
			edit:  replaced(6, `"sessionId":"fixture-session"`, `"sessionId":"other-session"`)},
		{name: "broken-tool-group", description: "The message holding two tool calls removed: their results are orphaned.", outcome: fixtures.OutcomeInvalid, diagnostic: diagInvalid,
			codes: []string{contract.CodeToolResultOrphaned},
			edit: func(lines [][]byte) ([]byte, error) {
				if !bytes.Contains(lines[3], []byte(`"type":"toolCall"`)) {
					return nil, fmt.Errorf("build: line 4 holds no tool call")
				}
				return join(append(append([][]byte(nil), lines[:3]...), lines[4:]...)), nil
			}},
		{name: "crlf-line-endings", description: "Every line ends in CR LF; the CR is JSON whitespace, so the file is valid.", outcome: fixtures.OutcomeValid,
			edit: func(lines [][]byte) ([]byte, error) {
				return bytes.ReplaceAll(join(lines), []byte("\n"), []byte("\r\n")), nil
			}},
		{name: "header-only", description: "A header and no messages: a valid empty history.", outcome: fixtures.OutcomeValid,
			edit: func(lines [][]byte) ([]byte, error) { return join(lines[:1]), nil }},
	}
}

// validReference returns the valid reference file: the all-block-types
// history written as the reference adapter writes it, with the ProjectRoot
// placeholder in its header.
func validReference() ([]byte, error) {
	h, ok := historyByName(fixtures.HistoryAllBlockTypes)
	if !ok {
		return nil, fmt.Errorf("build: no history %s", fixtures.HistoryAllBlockTypes)
	}
	return writeReference(h.messages())
}

func historyByName(name string) (history, bool) {
	for _, h := range histories() {
		if h.name == name {
			return h, true
		}
	}
	return history{}, false
}

func referenceFiles() ([]File, error) {
	valid, err := validReference()
	if err != nil {
		return nil, err
	}
	lines := bytes.Split(bytes.TrimSuffix(valid, []byte("\n")), []byte("\n"))
	entry := func(name, description, outcome, diagnostic string, codes []string) []byte {
		ms := []member{
			{"name", str(name)},
			{"file", str("reference/" + name + ".jsonl")},
			{"format", str(fixtures.FormatVersion)},
			{"description", str(description)},
			{"outcome", str(outcome)},
		}
		if diagnostic != "" {
			ms = append(ms, member{"expectedDiagnostic", str(diagnostic)})
		}
		if len(codes) > 0 {
			ms = append(ms, member{"expectedCodes", strs(codes)})
		}
		return object(ms...)
	}
	files := []File{{Path: "reference/valid.jsonl", Kind: fixtures.KindReferenceJSONL, Data: valid}}
	entries := [][]byte{entry("valid", "The all-block-types history as the reference adapter writes it.", fixtures.OutcomeValid, "", nil)}
	for _, c := range corruptions() {
		data, err := c.edit(lines)
		if err != nil {
			return nil, fmt.Errorf("build: reference corruption %s: %w", c.name, err)
		}
		files = append(files, File{Path: "reference/" + c.name + ".jsonl", Kind: fixtures.KindReferenceJSONL, Data: data})
		entries = append(entries, entry(c.name, c.description, c.outcome, c.diagnostic, c.codes))
	}
	manifest := envelope(fixtures.KindReferenceManifest,
		member{"recordType", str(referenceRecordType)},
		member{"runtimeId", str(fixtures.HistoryRuntimeID)},
		member{"sessionId", str(fixtures.HistorySessionID)},
		member{"projectRoot", str(fixtures.ProjectRoot)},
		member{"files", array(entries)},
	)
	files = append(files, File{Path: fixtures.ReferenceManifestPath, Kind: fixtures.KindReferenceManifest, Data: layout(manifest, 3)})
	return files, nil
}
