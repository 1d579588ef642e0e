package build

import (
	"encoding/json"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/localkv"
	"github.com/ds4context/adapterkit/fixtures"
)

// eligibilityInput is one input of the local KV eligibility fixture, in the
// file's form: options are raw JSON, "" meaning absent.
type eligibilityInput struct {
	name, description                   string
	enabled, capabilityEnabled          bool
	capabilityVersion, destination      string
	runtimeID, runtimeRevision          string
	provider, model, modelRevision      string
	privacyPolicyVersion, promptPrefix  string
	systemOptions, toolOptions          string
	prefixTokenCount, contextTokenCount int64
}

// eligibilityInputs defines the local KV eligibility inputs whose
// derivations the goldens pin.
func eligibilityInputs() []eligibilityInput {
	base := eligibilityInput{
		enabled: true, capabilityEnabled: true,
		capabilityVersion: contract.LocalKVRuntimePortVersion, destination: "local",
		runtimeID: "fixture-runtime", runtimeRevision: "runtime-2026.11",
		provider: "llama-cpp", model: "qwen2.5-coder-7b", modelRevision: "q4_k_m-2026-01",
		privacyPolicyVersion: "privacy-policy-1",
		promptPrefix:         "You are a careful assistant.\nProject: adapterkit\n",
		systemOptions:        `{"temperature":0.2,"seed":7}`,
		toolOptions:          `[{"name":"read","schema":{"path":"string"}}]`,
		prefixTokenCount:     512, contextTokenCount: 2048,
	}
	with := func(name, description string, edit func(*eligibilityInput)) eligibilityInput {
		in := base
		in.name, in.description = name, description
		edit(&in)
		return in
	}
	return []eligibilityInput{
		with("eligible-basic", "Every field valid, both options present.", func(*eligibilityInput) {}),
		with("eligible-options-absent", "Both options absent: omitted from the options hash.", func(in *eligibilityInput) {
			in.systemOptions, in.toolOptions = "", ""
		}),
		with("eligible-system-options-null", "systemOptions is JSON null, which hashes differently from absent.", func(in *eligibilityInput) {
			in.systemOptions, in.toolOptions = "null", ""
		}),
		with("eligible-options-key-order", "Option members in another order: the same options hash as eligible-basic.", func(in *eligibilityInput) {
			in.systemOptions = `{"seed":7,"temperature":0.2}`
		}),
		with("eligible-unicode-prefix", "A prefix and identifiers outside ASCII, with characters JSON.stringify does not escape.", func(in *eligibilityInput) {
			in.promptPrefix = "Résumé <tag> & \u2028 line \U0001F600\n"
			in.model = "modèle-Ω"
		}),
		with("eligible-zero-tokens", "Zero prefix and context tokens are valid counts.", func(in *eligibilityInput) {
			in.prefixTokenCount, in.contextTokenCount = 0, 0
		}),
		with("ineligible-disabled", "Local KV reuse switched off: the first check fails.", func(in *eligibilityInput) {
			in.enabled = false
		}),
		with("ineligible-remote", "A remote destination is never eligible.", func(in *eligibilityInput) {
			in.destination = "remote"
		}),
		with("ineligible-padded-provider", "A provider with surrounding whitespace is not an identifier.", func(in *eligibilityInput) {
			in.provider = " llama-cpp"
		}),
		with("ineligible-empty-prefix", "An empty prompt prefix.", func(in *eligibilityInput) {
			in.promptPrefix = ""
		}),
		with("ineligible-prefix-exceeds-context", "More prefix tokens than context tokens.", func(in *eligibilityInput) {
			in.prefixTokenCount, in.contextTokenCount = 4096, 2048
		}),
	}
}

func eligibilityFiles() ([]File, error) {
	items := make([][]byte, 0, 16)
	for _, in := range eligibilityInputs() {
		input := localkv.EligibilityInput{
			Enabled: in.enabled, CapabilityEnabled: in.capabilityEnabled,
			CapabilityVersion: in.capabilityVersion, Destination: in.destination,
			RuntimeID: in.runtimeID, RuntimeRevision: in.runtimeRevision,
			Provider: in.provider, Model: in.model, ModelRevision: in.modelRevision,
			PrivacyPolicyVersion: in.privacyPolicyVersion, PromptPrefix: []byte(in.promptPrefix),
			PrefixTokenCount: in.prefixTokenCount, ContextTokenCount: in.contextTokenCount,
		}
		if in.systemOptions != "" {
			input.SystemOptions = json.RawMessage(in.systemOptions)
		}
		if in.toolOptions != "" {
			input.ToolOptions = json.RawMessage(in.toolOptions)
		}
		encoded, err := input.MarshalJSON()
		if err != nil {
			return nil, err
		}
		items = append(items, object(
			member{"name", str(in.name)},
			member{"description", str(in.description)},
			member{"input", encoded},
		))
	}
	data := envelope(fixtures.KindEligibilityInputs, member{"inputs", array(items)})
	return []File{{Path: fixtures.EligibilityInputsPath, Kind: fixtures.KindEligibilityInputs, Data: layout(data, 4)}}, nil
}
