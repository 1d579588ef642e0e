package bridge

import (
	"encoding/json"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/gen"
	"github.com/ds4context/adapterkit/contract/localkv"
	"github.com/ds4context/adapterkit/contract/privacy"
)

// ProtocolVersion names the protocol this package speaks.
const ProtocolVersion = "runtime-adapter-bridge-v1"

// The methods of the protocol. The harness sends every method except
// MethodTransport and the three MethodLocalKV… callbacks, which the adapter
// process sends to the harness; either side may send MethodCancel.
const (
	// MethodCancel tells the other side that the sender gave up one of its
	// requests (params {"id": N}): the receiver may stop serving it, and
	// answers null whatever it does.
	MethodCancel                 = "cancel"
	MethodHello                  = "hello"
	MethodCreate                 = "create"
	MethodIdentity               = "identity"
	MethodCapabilityDeclarations = "capabilityDeclarations"
	MethodNegotiateCapabilities  = "negotiateCapabilities"
	MethodSnapshotHistory        = "snapshotHistory"
	MethodRebuildDerivedState    = "rebuildDerivedState"
	MethodCurrentModel           = "currentModel"
	MethodTrustedProjectRoot     = "trustedProjectRoot"
	MethodEnforcePrivacy         = "enforcePrivacy"
	MethodComplete               = "complete"
	MethodDiagnostics            = "diagnostics"
	MethodEmbed                  = "embed"
	MethodSourceAppend           = "sourceAppend"
	MethodSourceCorrupt          = "sourceCorrupt"
	MethodSourceRewrite          = "sourceRewrite"
	MethodSourceBreak            = "sourceBreak"
	MethodSourceRepair           = "sourceRepair"
	MethodShutdown               = "shutdown"
	MethodCleanup                = "cleanup"
	MethodTransport              = "transport"
	MethodLocalKVTryReuse        = "localKvTryReuse"
	MethodLocalKVFullReplay      = "localKvFullReplay"
	MethodLocalKVShutdown        = "localKvShutdown"
)

// The error codes a response may carry. An error response never carries
// payload text: its message is metadata only.
const (
	// CodeUnsupportedVersion answers a hello naming a protocol version the
	// peer does not speak.
	CodeUnsupportedVersion = "unsupported-version"
	// CodeHelloRequired answers any request sent before a successful hello.
	CodeHelloRequired = "hello-required"
	// CodeUnknownMethod answers a method the peer does not implement.
	CodeUnknownMethod = "unknown-method"
	// CodeInvalidParams answers params that do not have the method's shape.
	CodeInvalidParams = "invalid-params"
	// CodeUnknownInstance answers a call naming no live instance.
	CodeUnknownInstance = "unknown-instance"
	// CodeFactoryFailed answers a create whose factory failed.
	CodeFactoryFailed = "factory-failed"
	// CodeUnrepresentable answers a create whose runtime cannot hold the
	// fixture's history; the error's family names the family of history
	// shapes it cannot hold ("multi-result"), the message adds a few
	// metadata-only words or is empty. The harness returns it as
	// conformance.Unrepresentable(family, message); one without a family
	// is a free-text refusal, which the checks do not accept.
	CodeUnrepresentable = "unrepresentable"
	// CodeAdapterError answers an adapter method that returned an error
	// (snapshot of a corrupt history, enforcement that failed closed, a
	// read after shutdown, …).
	CodeAdapterError = "adapter-error"
	// CodeAdapterPanicked answers an adapter method that failed abnormally
	// (a Go panic, an exception thrown where the contract allows none). The
	// client re-raises it as a panic carrying a *RemoteError, as the method
	// would have panicked in process.
	CodeAdapterPanicked = "adapter-panicked"
	// CodeCleanupFailed answers a cleanup that failed.
	CodeCleanupFailed = "cleanup-failed"
	// CodeTransportFailed answers a transport callback whose transport
	// returned an error.
	CodeTransportFailed = "transport-failed"
	// CodeLocalKVPortFailed answers a local KV callback whose runtime port
	// returned an error.
	CodeLocalKVPortFailed = "local-kv-port-failed"
	// CodeResponseTooLarge answers a request whose response would exceed the
	// line bound.
	CodeResponseTooLarge = "response-too-large"
	// CodeUnsupported answers a sourceBreak asking for a damage the
	// runtime's store cannot take; the harness returns an error matching
	// errors.ErrUnsupported, and the damage is skipped.
	CodeUnsupported = "unsupported"
	// CodeCallEnded answers a callback whose params name (in "call") a
	// harness request that is no longer pending: the harness answered it or
	// gave it up, so nothing the callback asks for is done.
	CodeCallEnded = "call-ended"
)

// WireError is the error member of a response. Family is set on an
// unrepresentable error only: the id of the family of history shapes
// (gen.Families) the runtime cannot hold.
type WireError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Family  string `json:"family,omitempty"`
}

// envelope is one protocol line: a request (Method set) or a response
// (Result or Error set).
type envelope struct {
	ID     uint64          `json:"id"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *WireError      `json:"error,omitempty"`
	// held is the bytes of the line that carried a message read, which
	// it holds within the held bound until it is done with.
	held int
}

type helloParams struct {
	Protocol string `json:"protocol"`
}

type helloResult struct {
	Protocol string `json:"protocol"`
	Factory  string `json:"factory"`
}

// createParams is the params of create. LocalKVPort says the harness has a
// local KV runtime port for the instance, reachable through the
// localKv… callbacks.
type createParams struct {
	Fixture     conformance.Fixture `json:"fixture"`
	LocalKVPort bool                `json:"localKvPort,omitempty"`
}

// createResult is the result of create. EmbeddingPort, when present,
// declares the instance's embedding port, which embed requests reach.
// Source says the instance offers the source hook (sourceAppend and
// sourceCorrupt requests), SourceRewrite that its hook also rewrites a
// message in place (sourceRewrite requests), SourceBreak that it also
// damages and repairs the history (sourceBreak and sourceRepair
// requests); PrivacyConfig, when present, is the privacy configuration its
// adapter enforces.
type createResult struct {
	Instance            string          `json:"instance"`
	ExpectedProjectRoot string          `json:"expectedProjectRoot"`
	EmbeddingPort       *embeddingDecl  `json:"embeddingPort,omitempty"`
	Source              bool            `json:"source,omitempty"`
	SourceRewrite       bool            `json:"sourceRewrite,omitempty"`
	SourceBreak         bool            `json:"sourceBreak,omitempty"`
	PrivacyConfig       *privacy.Config `json:"privacyConfig,omitempty"`
	// Limits declares the families the runtime cannot hold
	// (conformance.Instance.Limits); Held is the history as the runtime
	// holds it after seeding (conformance.Instance.Held).
	Limits []gen.Family       `json:"limits,omitempty"`
	Held   []contract.Message `json:"held,omitempty"`
}

// sourceBreakParams is the params of sourceBreak.
type sourceBreakParams struct {
	Instance string             `json:"instance"`
	Damage   conformance.Damage `json:"damage"`
}

// sourceAppendParams is the params of sourceAppend and sourceRewrite.
type sourceAppendParams struct {
	Instance string           `json:"instance"`
	Message  contract.Message `json:"message"`
}

// embeddingDecl declares an embedding port: its identity and, when
// positive, the most texts one embed request may carry.
type embeddingDecl struct {
	contract.EmbeddingIdentity
	MaxBatch int `json:"maxBatch,omitempty"`
}

type embedParams struct {
	Instance string   `json:"instance"`
	Texts    []string `json:"texts"`
}

type instanceParams struct {
	Instance string `json:"instance"`
}

type negotiateParams struct {
	Instance string                       `json:"instance"`
	Requests []contract.CapabilityRequest `json:"requests"`
}

// payloadParams is the params of enforcePrivacy and complete. Payload is the
// payload's JSON; when the harness could not encode the payload, Payload is
// absent and Uninspectable is true, and the adapter must fail closed.
type payloadParams struct {
	Instance      string          `json:"instance"`
	Provider      string          `json:"provider"`
	Model         string          `json:"model,omitempty"`
	Payload       json.RawMessage `json:"payload,omitempty"`
	Uninspectable bool            `json:"payloadUninspectable,omitempty"`
}

// transportParams is the params of transport. Call, when the adapter
// process knows it, is the id of the harness request the callback serves
// (the complete being served); the same holds for kvParams and
// callbackParams.
type transportParams struct {
	Instance string                    `json:"instance"`
	Request  contract.TransportRequest `json:"request"`
	Call     uint64                    `json:"call,omitempty"`
}

type transportResult struct {
	Output json.RawMessage `json:"output"`
}

type kvParams struct {
	Instance string               `json:"instance"`
	Request  localkv.ReuseRequest `json:"request"`
	Call     uint64               `json:"call,omitempty"`
}

// callbackParams is the params of localKvShutdown.
type callbackParams struct {
	Instance string `json:"instance"`
	Call     uint64 `json:"call,omitempty"`
}

// cancelParams is the params of cancel.
type cancelParams struct {
	ID uint64 `json:"id"`
}
