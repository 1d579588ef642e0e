package reference

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/localkv"
	"github.com/ds4context/adapterkit/contract/privacy"
	"github.com/ds4context/adapterkit/internal/jsstring"
)

// LocalKVOptions configure the local KV reuse path (capability
// local-kv-reuse). Configuring them (Options.LocalKV non-nil) declares the
// capability supported; only Enabled sends completions through the port.
type LocalKVOptions struct {
	// Enabled sends completions whose sanitised destination is local
	// through the local KV path. When false the port is only declared and
	// shut down, never asked to complete.
	Enabled bool
	// Port is the runtime's handle-free KV port (required). If it also
	// implements localkv.ShutdownPort, the adapter's Shutdown calls it
	// once.
	Port localkv.RuntimePort
	// RuntimeRevision identifies the runtime build (required; trimmed).
	RuntimeRevision string
	// ModelRevision pins the model's weights (required; trimmed).
	ModelRevision string
	// CapabilityVersion is declared for local-kv-reuse and hashed into every
	// key. Empty means contract.LocalKVRuntimePortVersion; any other value
	// is trimmed and rejected if nothing remains.
	CapabilityVersion string
	// PrivacyPolicyVersion names the privacy policy in every key. Empty
	// means PrivacyPolicyVersion of the adapter's privacy configuration;
	// any other value is trimmed and rejected if nothing remains.
	PrivacyPolicyVersion string
	// Prepare extracts the reusable prefix, its options and the token
	// counts from a copy of the sanitised payload; false sends the
	// completion through the ordinary transport. Required when Enabled.
	// It must be safe for concurrent use.
	Prepare func(payload json.RawMessage) (LocalKVPrepared, bool)
}

// LocalKVPrepared is what Prepare extracts from a sanitised payload: the
// part of the eligibility input that depends on the request. The fields
// follow localkv.EligibilityInput (nil options mean absent).
type LocalKVPrepared struct {
	// PromptPrefix is the reusable prefix; a string prefix is its UTF-8
	// bytes.
	PromptPrefix []byte
	// SystemOptions and ToolOptions shape the prefix's KV state; plain JSON
	// values, nil meaning absent.
	SystemOptions any
	ToolOptions   any
	// PrefixTokenCount and ContextTokenCount are the request's token
	// counts.
	PrefixTokenCount  int64
	ContextTokenCount int64
}

// PrivacyPolicyVersion returns the default privacy policy version of a
// privacy configuration: the lowercase hex SHA-256 of its stable JSON
// (localkv.StableHash) with the contract's member names enabled,
// defaultClassification, localProviders, remoteDefaultAllowed,
// remoteProviders and redactSecrets. Nil lists and maps count as empty.
// Two configurations that differ in any member give different versions,
// so changing the policy never reuses state prefilled under the old one.
func PrivacyPolicyVersion(cfg privacy.Config) (string, error) {
	classes := func(cs []privacy.Classification) []any {
		out := make([]any, len(cs))
		for i, c := range cs {
			out[i] = string(c)
		}
		return out
	}
	locals := make([]any, len(cfg.LocalProviders))
	for i, p := range cfg.LocalProviders {
		locals[i] = p
	}
	remotes := make(map[string]any, len(cfg.RemoteProviders))
	for name, cs := range cfg.RemoteProviders {
		remotes[name] = classes(cs)
	}
	return localkv.StableHash(map[string]any{
		"enabled":               cfg.Enabled,
		"defaultClassification": string(cfg.DefaultClassification),
		"localProviders":        locals,
		"remoteDefaultAllowed":  classes(cfg.RemoteDefaultAllowed),
		"remoteProviders":       remotes,
		"redactSecrets":         cfg.RedactSecrets,
	})
}

// localKV is the adapter's configured local KV path. It is immutable after
// construction; the controller is safe for concurrent use.
type localKV struct {
	enabled    bool
	port       localkv.RuntimePort
	controller *localkv.Controller
	prepare    func(json.RawMessage) (LocalKVPrepared, bool)

	runtimeRevision      string
	modelRevision        string
	capabilityVersion    string
	privacyPolicyVersion string
}

// newLocalKV validates o (nil means not configured) against the adapter's
// privacy configuration.
func newLocalKV(o *LocalKVOptions, cfg privacy.Config) (*localKV, error) {
	if o == nil {
		return nil, nil
	}
	if o.Port == nil {
		return nil, optionsError("local KV needs a runtime port")
	}
	if o.Enabled && o.Prepare == nil {
		return nil, optionsError("enabled local KV needs a prepare function")
	}
	kv := &localKV{
		enabled:              o.Enabled,
		port:                 o.Port,
		controller:           localkv.NewController(o.Port),
		prepare:              o.Prepare,
		runtimeRevision:      jsstring.Trim(o.RuntimeRevision),
		modelRevision:        jsstring.Trim(o.ModelRevision),
		capabilityVersion:    jsstring.Trim(o.CapabilityVersion),
		privacyPolicyVersion: jsstring.Trim(o.PrivacyPolicyVersion),
	}
	if o.CapabilityVersion == "" {
		kv.capabilityVersion = contract.LocalKVRuntimePortVersion
	}
	if o.PrivacyPolicyVersion == "" {
		v, err := PrivacyPolicyVersion(cfg)
		if err != nil {
			return nil, fmt.Errorf("%w: local KV privacy policy version: %w", ErrInvalidOptions, err)
		}
		kv.privacyPolicyVersion = v
	}
	switch "" {
	case kv.runtimeRevision:
		return nil, optionsError("local KV runtime revision is blank")
	case kv.modelRevision:
		return nil, optionsError("local KV model revision is blank")
	case kv.capabilityVersion:
		return nil, optionsError("local KV capability version is blank")
	case kv.privacyPolicyVersion:
		return nil, optionsError("local KV privacy policy version is blank")
	}
	return kv, nil
}

// declaration declares local-kv-reuse: supported with the capability
// version when a port is configured (enabled or not), unsupported otherwise.
func (kv *localKV) declaration() contract.CapabilityDeclaration {
	if kv == nil {
		return contract.CapabilityDeclaration{ID: contract.CapabilityLocalKVReuse, Reason: ReasonNoLocalKV}
	}
	return contract.CapabilityDeclaration{ID: contract.CapabilityLocalKVReuse, Supported: true, Version: kv.capabilityVersion}
}

// errPanicked stands for a panic in Prepare or in the runtime port.
var errPanicked = errors.New("reference: local KV path panicked")

// complete offers a sanitised request to the local KV path. It reports
// done when the path completed the request, with the output and metadata.
// It reports not done, and the caller uses the ordinary transport, when the
// path does not apply (disabled, remote destination, nothing prepared, an
// ineligible request) or failed; failed is then true and the caller records
// local-kv-replay-failed.
func (kv *localKV) complete(ctx context.Context, runtimeID string, req contract.TransportRequest) (out json.RawMessage, meta *contract.LocalKVMetadata, done, failed bool) {
	if kv == nil || !kv.enabled || req.Destination != contract.DestinationLocal {
		return nil, nil, false, false
	}
	res, ok, err := kv.run(ctx, runtimeID, req)
	switch {
	case err != nil:
		return nil, nil, false, true
	case !ok || res.Status != localkv.StatusCompleted:
		return nil, nil, false, false
	}
	return res.Output, res.LocalKV, true, false
}

// run prepares req and passes it to the controller. ok is false when
// Prepare found nothing to reuse. A panic in Prepare or the port is an
// error.
func (kv *localKV) run(ctx context.Context, runtimeID string, req contract.TransportRequest) (res localkv.ControllerResult, ok bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, ok, err = localkv.ControllerResult{}, false, errPanicked
		}
	}()
	p, ok := kv.prepare(bytes.Clone(req.Payload))
	if !ok {
		return localkv.ControllerResult{}, false, nil
	}
	res, err = kv.controller.Complete(ctx, localkv.ControllerRequest{
		Input: localkv.EligibilityInput{
			Enabled:              true,
			CapabilityEnabled:    true,
			CapabilityVersion:    kv.capabilityVersion,
			Destination:          string(req.Destination),
			RuntimeID:            runtimeID,
			RuntimeRevision:      kv.runtimeRevision,
			Provider:             req.Provider,
			Model:                req.Model,
			ModelRevision:        kv.modelRevision,
			PrivacyPolicyVersion: kv.privacyPolicyVersion,
			PromptPrefix:         p.PromptPrefix,
			SystemOptions:        p.SystemOptions,
			ToolOptions:          p.ToolOptions,
			PrefixTokenCount:     p.PrefixTokenCount,
			ContextTokenCount:    p.ContextTokenCount,
		},
		Payload: req.Payload,
	})
	return res, true, err
}

// shutdown calls the port's shutdown (at most once over the adapter's
// life); a panic counts as a failure.
func (kv *localKV) shutdown(ctx context.Context) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errPanicked
		}
	}()
	return kv.controller.Shutdown(ctx)
}

// LocalKVPort returns the configured local KV runtime port, or nil.
func (a *Adapter) LocalKVPort() localkv.RuntimePort {
	if a.kv == nil {
		return nil
	}
	return a.kv.port
}

// LocalKVDiagnostics returns the aggregate local KV counters (numbers
// only) and true, or false when no local KV port is configured. They keep
// counting until the adapter is discarded; shutdown does not reset them.
func (a *Adapter) LocalKVDiagnostics() (localkv.Diagnostics, bool) {
	if a.kv == nil {
		return localkv.Diagnostics{}, false
	}
	return a.kv.controller.Diagnostics(), true
}

var (
	_ localkv.PortProvider        = (*Adapter)(nil)
	_ localkv.DiagnosticsProvider = (*Adapter)(nil)
)

// localKVDiagnostic returns the diagnostic of a local KV code: its message
// and severity, about capability local-kv-reuse.
func localKVDiagnostic(code string) contract.Diagnostic {
	return contract.Diagnostic{Code: code, Severity: diagnosticSeverities[code], Message: diagnosticMessages[code],
		Capability: contract.CapabilityLocalKVReuse}
}
