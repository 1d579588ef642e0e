package mutants

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/internal/jsstring"
	"github.com/ds4context/adapterkit/reference"
)

// The mutants of strings where Go and JavaScript differ. SPEC pins
// JavaScript's trim for "blank" and for provider names (§7, §8, §9, §11),
// JavaScript's toLowerCase for provider names and payload keys (§8), and
// keeps every string as the runtime wrote it (§2). Go's strings.TrimSpace
// also trims U+0085 and keeps U+FEFF; strings.ToLower maps U+0130 to "i"
// where JavaScript gives "i" + U+0307; strings.EqualFold folds U+017F onto
// s and U+212A onto k, which lower-casing does not. Each mutant uses one
// such Go function where SPEC says otherwise, and answers every other
// string as the reference adapter does. The checks now draw the strings
// each slips on (contract/gen's adversarial strings, the privacy probes'
// provider names and member names of those classes), so none awaits a
// check: all are in Catalogue.
var pendingStrings = []Mutant{
	{
		Name: "blank-ids-by-go-trimspace", Family: FamilyStrings,
		Breaks: "an id is blank when JavaScript's trim empties it (§7); this adapter validates with strings.TrimSpace and refuses a valid history whose message id, entry id or tool call id is U+0085",
		// The projection's histories hold entry and tool call ids of
		// U+0085 and spaces; the model's sequences hold one in some seeds
		// only (1 of the kit's seed and seeds 1–3).
		Fails:         all(conformance.CheckProjection),
		ModelByChance: true,
		port:          watchReplays,
		wrap: func(a contract.Adapter, e *env) contract.Adapter {
			m := newOwnLog(a, e, keepNewest(100))
			m.check = goBlankIDs
			return m
		},
	},
	{
		Name: "provider-policy-go-trimspace", Family: FamilyStrings,
		Breaks: "provider names are compared trimmed as JavaScript trims (§8); this policy trims with strings.TrimSpace, so the remote provider \"ollama\\u0085\" is taken for the local ollama and gets local-only content",
		Fails:  all(conformance.CheckPrivacyProbes, conformance.CheckPrivacyEngine, conformance.CheckModel),
		port:   leakyPort,
		wrap:   leaky(policyFor(strings.TrimSpace), nil),
	},
	{
		Name: "provider-policy-go-tolower", Family: FamilyStrings,
		Breaks: "provider names are compared lower-cased as JavaScript lower-cases (§8: U+0130 becomes i + U+0307); this policy uses strings.ToLower, so the remote provider \"LMSTUD\\u0130O\" is taken for the local lmstudio",
		Fails:  all(conformance.CheckPrivacyProbes, conformance.CheckPrivacyEngine, conformance.CheckModel),
		port:   leakyPort,
		wrap:   leaky(policyFor(strings.ToLower), nil),
	},
	{
		Name: "provider-policy-equalfold", Family: FamilyStrings,
		Breaks: "provider names are compared trimmed and lower-cased (§8); this policy matches local providers with strings.EqualFold, so the remote provider \"lm\\u017ftudio\" is taken for the local lmstudio",
		Fails:  all(conformance.CheckPrivacyProbes, conformance.CheckPrivacyEngine, conformance.CheckModel),
		port:   leakyPort,
		wrap: leaky(policyFor(func(p string) string {
			for _, local := range defaultLocalProviders {
				if strings.EqualFold(jsstring.Trim(p), local) {
					return local
				}
			}
			return p
		}), nil),
	},
	{
		Name: "payload-keys-equalfold", Family: FamilyStrings,
		Breaks: "payload keys are compared lower-cased (§8); this engine classifies them with strings.EqualFold, so \"\\u017ftop_reason\" is taken for the structural stop_reason and a secret under it reaches a remote provider",
		Fails:  all(conformance.CheckPrivacyProbes, conformance.CheckPrivacyEngine, conformance.CheckModel),
		port:   leakyPort,
		wrap:   leaky(foldedKeys, nil),
	},
	{
		Name: "texts-crlf-normalised", Family: FamilyStrings,
		Breaks: "a snapshot keeps every text as the runtime wrote it (§2); this one normalises CRLF line ends to LF in texts, thinking and tool results",
		// The projection's histories hold texts with CRLF; the model's
		// appended texts hold one in most seeds (3 of the kit's seed and
		// seeds 1–3).
		Fails:         all(conformance.CheckProjection),
		ModelByChance: true,
		wrap: func(a contract.Adapter, _ *env) contract.Adapter {
			return projected{decorator{a}, func(m *contract.Message) {
				for i, b := range m.Blocks {
					switch b := b.(type) {
					case *contract.TextBlock:
						c := *b
						c.Text = strings.ReplaceAll(b.Text, "\r\n", "\n")
						m.Blocks[i] = &c
					case *contract.ThinkingBlock:
						c := *b
						c.Thinking = strings.ReplaceAll(b.Thinking, "\r\n", "\n")
						m.Blocks[i] = &c
					case *contract.ToolResultBlock:
						c := *b
						c.Content = strings.ReplaceAll(b.Content, "\r\n", "\n")
						m.Blocks[i] = &c
					}
				}
			}}
		},
	},
	{
		Name: "tool-names-stripped-of-noncharacters", Family: FamilyStrings,
		Breaks: "a snapshot keeps every tool name as the runtime wrote it (§2); this one strips Unicode noncharacters (U+FDD0–U+FDEF, U+FFFE, U+FFFF, …) from tool call and tool result names",
		// The projection's histories hold tool names with noncharacters;
		// the model's appended tool exchanges hold one in most seeds (3 of
		// the kit's seed and seeds 1–3).
		Fails:         all(conformance.CheckProjection),
		ModelByChance: true,
		SuiteByChance: true,
		wrap: func(a contract.Adapter, _ *env) contract.Adapter {
			return projected{decorator{a}, func(m *contract.Message) {
				for i, b := range m.Blocks {
					switch b := b.(type) {
					case *contract.ToolCallBlock:
						c := *b
						c.Name = stripNoncharacters(b.Name)
						m.Blocks[i] = &c
					case *contract.ToolResultBlock:
						c := *b
						c.ToolName = stripNoncharacters(b.ToolName)
						m.Blocks[i] = &c
					}
				}
			}}
		},
	},
}

// defaultLocalProviders are the local providers of privacy's default
// configuration.
var defaultLocalProviders = []string{"ollama", "llama-cpp", "lmstudio"}

// policyFor is the default policy's enforcement for the provider name
// normalise makes of the one given (the engine then trims and lower-cases
// it as JavaScript does); the result names the provider as given.
func policyFor(normalise func(string) string) Enforcement {
	return func(provider string, payload any) (contract.PrivacyResult, error) {
		res, err := sanitise(normalise(provider), payload)
		res.Provider = provider
		return res, err
	}
}

// goBlankIDs refuses a history holding an id strings.TrimSpace empties, as
// a validation failure of the missing id.
func goBlankIDs(s *contract.HistorySnapshot) error {
	blank := func(id string) bool { return strings.TrimSpace(id) == "" && !contract.IsBlank(id) }
	var issues []contract.ValidationIssue
	for i := range s.Messages {
		m := &s.Messages[i]
		switch {
		case blank(m.ID):
			issues = append(issues, contract.ValidationIssue{Code: "history-message-id-missing", Message: "Canonical message IDs must be non-empty and unique", MessageID: new(m.ID)})
		case blank(m.Provenance.EntryID):
			issues = append(issues, contract.ValidationIssue{Code: "history-provenance-invalid", Message: "Canonical message provenance does not match the snapshot", MessageID: new(m.ID)})
		}
		for _, b := range m.Blocks {
			switch b := b.(type) {
			case *contract.ToolCallBlock:
				if blank(b.ID) {
					issues = append(issues, contract.ValidationIssue{Code: "tool-call-identity-invalid", Message: "Canonical tool call IDs must be non-empty and unique", ToolCallID: new(b.ID)})
				}
			case *contract.ToolResultBlock:
				if blank(b.ToolCallID) {
					issues = append(issues, contract.ValidationIssue{Code: "tool-result-orphaned", Message: "Canonical tool results must reference one known tool call", ToolCallID: new(b.ToolCallID)})
				}
			}
		}
	}
	if len(issues) == 0 {
		return nil
	}
	return &reference.ValidationError{Issues: issues}
}

// stripNoncharacters removes Unicode's 66 noncharacters from s.
func stripNoncharacters(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 0xFDD0 && r <= 0xFDEF || r&0xFFFE == 0xFFFE {
			return -1
		}
		return r
	}, s)
}

// payloadKeys are the keys SPEC §8 names, structural and content.
var payloadKeys = []string{"api", "id", "model", "name", "role", "stopreason", "stop_reason", "toolcallid", "tool_call_id", "type",
	"arguments", "content", "contents", "context", "description", "input", "instructions", "messages", "metadata", "parts", "prompt",
	"requestmetadata", "system", "system_instruction", "systeminstruction", "systemprompt", "text", "thinking", "toolconfig", "tools"}

// memberName matches a JSON string followed by a colon: a member name.
var memberName = regexp.MustCompile(`"(?:[^"\\]|\\.)*"\s*:`)

// foldedKeys is the default policy's enforcement by an engine that
// classifies payload keys with strings.EqualFold: a key that folds onto a
// key SPEC names, without lower-casing to it, is classified as that key
// (the engine is given it spelt in ASCII capitals, which lower-case to it,
// and the sanitised payload gets the name back).
func foldedKeys(provider string, payload any) (contract.PrivacyResult, error) {
	raw, err := toJSON(payload)
	if err != nil || !json.Valid(raw) {
		return sanitise(provider, payload)
	}
	taken := map[string]bool{}
	for _, m := range memberName.FindAll(raw, -1) {
		if k, ok := memberKey(m); ok {
			taken[k] = true
		}
	}
	back := map[string]string{}
	renamed := memberName.ReplaceAllFunc(raw, func(m []byte) []byte {
		k, ok := memberKey(m)
		if !ok || slices.Contains(payloadKeys, jsstring.Lower(k)) {
			return m
		}
		for _, n := range payloadKeys {
			up := strings.ToUpper(n)
			if strings.EqualFold(k, n) && !taken[up] && (back[up] == "" || back[up] == k) {
				back[up] = k
				b, _ := json.Marshal(up)
				return append(b, ':')
			}
		}
		return m
	})
	res, err := sanitise(provider, json.RawMessage(renamed))
	if err != nil || len(back) == 0 {
		return res, err
	}
	res.Payload = memberName.ReplaceAllFunc(res.Payload, func(m []byte) []byte {
		if k, ok := memberKey(m); ok && back[k] != "" {
			b, _ := json.Marshal(back[k])
			return append(b, ':')
		}
		return m
	})
	return res, nil
}

// memberKey decodes the name of a member-name match ("name" and a colon).
func memberKey(m []byte) (string, bool) {
	var k string
	err := json.Unmarshal([]byte(strings.TrimRight(string(m[:len(m)-1]), " \t\r\n")), &k)
	return k, err == nil
}
