package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/localkv"
)

// Server exposes a conformance.Factory over the protocol: each create makes
// an instance with the factory, and the instance's transport calls back to
// the harness. The zero values of MaxLineBytes, MaxHeldBytes and
// TransportTimeout use DefaultMaxLineBytes, DefaultMaxHeldBytes and no
// timeout (the harness bounds its own calls).
type Server struct {
	// Factory creates the instances served.
	Factory conformance.Factory
	// MaxLineBytes bounds each line read or written.
	MaxLineBytes int
	// MaxHeldBytes bounds the bytes of the requests and answers the
	// server holds at once, as Options.MaxHeldBytes does for a client: a
	// request that would pass it ends Serve (ErrHeldTooLarge), an answer
	// to a transport callback that would pass it fails that callback.
	MaxHeldBytes int
	// TransportTimeout, if positive, bounds each transport callback.
	TransportTimeout time.Duration
}

// Serve serves factory on in and out with the default bounds; see
// (*Server).Serve.
func Serve(ctx context.Context, factory conformance.Factory, in io.Reader, out io.Writer) error {
	return (&Server{Factory: factory}).Serve(ctx, in, out)
}

// served is one live instance.
type served struct {
	inst conformance.Instance
}

// Serve answers requests read from in, writing responses and transport
// callbacks to out, until in ends (nil), the harness breaks the protocol (an
// ErrProtocol or ErrLineTooLong error), sends more requests at once than
// MaxHeldBytes holds (ErrHeldTooLarge) or ctx is cancelled (ctx.Err()).
// Requests are handled concurrently. Before returning, Serve shuts down and
// cleans up every instance the harness did not clean up, and joins their
// errors to the result. When ctx is cancelled Serve returns without waiting
// for a read from in to finish. When in is an *os.File on a blocking pipe
// (an adapter process's stdin), Serve reads a duplicate of it in
// non-blocking mode, which the pipe shares, and makes the pipe blocking
// again before it returns.
func (s *Server) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	st := &serverState{srv: s, instances: make(map[string]*served)}
	maxLine := s.MaxLineBytes
	if maxLine <= 0 {
		maxLine = DefaultMaxLineBytes
	}
	in, release := pollableInput(in)
	defer release()
	st.p = newPeer(in, out, maxLine, newHeldBudget(Options{MaxHeldBytes: s.MaxHeldBytes}.maxHeld()), st.handle, nil)
	st.p.startReadLoop()
	var cause error
	select {
	case <-st.p.done:
		st.p.mu.Lock()
		cause = st.p.err
		st.p.mu.Unlock()
		if errors.Is(cause, io.EOF) {
			cause = nil
		}
	case <-ctx.Done():
		cause = ctx.Err()
		st.p.fail(cause)
	}
	st.p.handlers.Wait()
	return errors.Join(cause, st.closeAll())
}

type serverState struct {
	srv   *Server
	p     *peer
	hello atomic.Bool

	mu        sync.Mutex
	next      uint64
	instances map[string]*served
}

// closeAll shuts down and cleans up the remaining instances.
func (st *serverState) closeAll() error {
	st.mu.Lock()
	ids := make([]string, 0, len(st.instances))
	for id := range st.instances {
		ids = append(ids, id)
	}
	st.mu.Unlock()
	var errs []error
	for _, id := range ids {
		st.mu.Lock()
		sv := st.instances[id]
		delete(st.instances, id)
		st.mu.Unlock()
		ctx := context.Background()
		errs = append(errs, protect(func() error { return sv.inst.Adapter.Shutdown(ctx) }))
		if sv.inst.Cleanup != nil {
			errs = append(errs, protect(func() error { return sv.inst.Cleanup(ctx) }))
		}
	}
	return errors.Join(errs...)
}

// protect runs f, turning a panic into an error.
func protect(f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("bridge: panic: %v", v)
		}
	}()
	return f()
}

func invalidParams(method string) *WireError {
	return &WireError{Code: CodeInvalidParams, Message: method + " params do not have the protocol's shape"}
}

// handle answers one harness request; a panic in the adapter becomes an
// adapter-panicked error.
func (st *serverState) handle(ctx context.Context, method string, params json.RawMessage) (res any, werr *WireError) {
	defer func() {
		if v := recover(); v != nil {
			if err, ok := v.(error); ok && errors.Is(err, contract.ErrNotImplemented) {
				res, werr = nil, &WireError{Code: CodeUnknownMethod, Message: clip(method + " is not implemented")}
				return
			}
			res, werr = nil, &WireError{Code: CodeAdapterPanicked, Message: clip(fmt.Sprintf("%s panicked: %v", method, v))}
		}
	}()
	if method == MethodHello {
		var p helloParams
		if err := unmarshalParams(params, &p); err != nil {
			return nil, invalidParams(method)
		}
		if p.Protocol != ProtocolVersion {
			return nil, &WireError{Code: CodeUnsupportedVersion, Message: "this adapter speaks " + ProtocolVersion + " only"}
		}
		st.hello.Store(true)
		return helloResult{Protocol: ProtocolVersion, Factory: st.srv.Factory.Name()}, nil
	}
	if !st.hello.Load() {
		return nil, &WireError{Code: CodeHelloRequired, Message: "send hello first"}
	}
	switch method {
	case MethodCreate:
		return st.create(ctx, params)
	case MethodCleanup:
		return st.cleanup(ctx, params)
	}
	var ip instanceParams
	if err := unmarshalParams(params, &ip); err != nil {
		return nil, invalidParams(method)
	}
	st.mu.Lock()
	sv := st.instances[ip.Instance]
	st.mu.Unlock()
	if sv == nil {
		return nil, &WireError{Code: CodeUnknownInstance, Message: "no live instance has this id"}
	}
	a := sv.inst.Adapter
	switch method {
	case MethodIdentity:
		return a.Identity(), nil
	case MethodCapabilityDeclarations:
		return nonNil(a.CapabilityDeclarations()), nil
	case MethodNegotiateCapabilities:
		var p negotiateParams
		if err := unmarshalParams(params, &p); err != nil {
			return nil, invalidParams(method)
		}
		return a.NegotiateCapabilities(p.Requests), nil
	case MethodSnapshotHistory:
		return adapterResult(a.SnapshotHistory(ctx))
	case MethodRebuildDerivedState:
		return adapterResult(a.RebuildDerivedState(ctx))
	case MethodCurrentModel:
		return adapterResult(a.CurrentModel(ctx))
	case MethodTrustedProjectRoot:
		return adapterResult(a.TrustedProjectRoot(ctx))
	case MethodEnforcePrivacy:
		var p payloadParams
		if err := unmarshalParams(params, &p); err != nil {
			return nil, invalidParams(method)
		}
		return adapterResult(a.EnforcePrivacy(ctx, contract.PrivacyRequest{Provider: p.Provider, Payload: p.payload()}))
	case MethodComplete:
		var p payloadParams
		if err := unmarshalParams(params, &p); err != nil {
			return nil, invalidParams(method)
		}
		return a.Complete(ctx, contract.CompletionRequest{Provider: p.Provider, Model: p.Model, Payload: p.payload()}), nil
	case MethodDiagnostics:
		return nonNil(a.Diagnostics()), nil
	case MethodEmbed:
		port := embeddingPort(a)
		if port == nil {
			return nil, &WireError{Code: CodeUnknownMethod, Message: "the instance has no embedding port"}
		}
		var p embedParams
		if err := unmarshalParams(params, &p); err != nil {
			return nil, invalidParams(method)
		}
		return adapterResult(port.Embed(ctx, nonNil(p.Texts)))
	case MethodSourceAppend, MethodSourceCorrupt, MethodSourceRewrite, MethodSourceBreak, MethodSourceRepair:
		src := sv.inst.Source
		if src == nil {
			return nil, &WireError{Code: CodeUnknownMethod, Message: "the instance has no source hook"}
		}
		switch method {
		case MethodSourceCorrupt:
			return nil, errorOrNil(src.Corrupt(ctx))
		case MethodSourceBreak, MethodSourceRepair:
			return sourceBreak(ctx, src, method, params)
		}
		rw, canRewrite := src.(conformance.SourceRewriter)
		if method == MethodSourceRewrite && !canRewrite {
			return nil, &WireError{Code: CodeUnknownMethod, Message: "the instance's source hook does not rewrite messages"}
		}
		var p sourceAppendParams
		if err := unmarshalParams(params, &p); err != nil {
			return nil, invalidParams(method)
		}
		var err error
		if method == MethodSourceRewrite {
			err = rw.Rewrite(ctx, p.Message)
		} else {
			err = src.Append(ctx, p.Message)
		}
		if we := unrepresentable(err); we != nil {
			return nil, we // a runtime that cannot hold the message
		}
		return nil, errorOrNil(err)
	case MethodShutdown:
		if err := a.Shutdown(ctx); err != nil {
			return nil, adapterError(err)
		}
		return nil, nil
	}
	return nil, &WireError{Code: CodeUnknownMethod, Message: "unknown method " + strconv.Quote(clip(method))}
}

// sourceBreak answers sourceBreak and sourceRepair for src.
func sourceBreak(ctx context.Context, src conformance.Source, method string, params json.RawMessage) (any, *WireError) {
	sb, ok := src.(conformance.SourceBreaker)
	if !ok {
		return nil, &WireError{Code: CodeUnknownMethod, Message: "the instance's source hook does not break histories"}
	}
	if method == MethodSourceRepair {
		return nil, errorOrNil(sb.Repair(ctx))
	}
	var p sourceBreakParams
	if err := unmarshalParams(params, &p); err != nil {
		return nil, invalidParams(method)
	}
	err := sb.Break(ctx, p.Damage)
	if errors.Is(err, errors.ErrUnsupported) {
		return nil, &WireError{Code: CodeUnsupported, Message: clip(err.Error())}
	}
	return nil, errorOrNil(err)
}

// payload returns the payload the adapter sees: the raw JSON, or a value
// that cannot be inspected.
func (p payloadParams) payload() any {
	if p.Uninspectable {
		return uninspectable{}
	}
	if p.Payload == nil {
		return json.RawMessage("null")
	}
	return p.Payload
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// adapterError answers an adapter method's error: unknown-method when the
// adapter does not implement the method (contract.ErrNotImplemented).
func adapterError(err error) *WireError {
	if errors.Is(err, contract.ErrNotImplemented) {
		return &WireError{Code: CodeUnknownMethod, Message: clip(err.Error())}
	}
	return &WireError{Code: CodeAdapterError, Message: clip(err.Error())}
}

// errorOrNil is adapterError of a non-nil error, else nil.
func errorOrNil(err error) *WireError {
	if err != nil {
		return adapterError(err)
	}
	return nil
}

// unrepresentable returns the unrepresentable error of a factory that
// refused a history, or nil: the refusal's family and detail, or, for a
// free-text refusal, no family and the text.
func unrepresentable(err error) *WireError {
	if !errors.Is(err, conformance.ErrUnrepresentable) {
		return nil
	}
	var r *conformance.Refusal
	if errors.As(err, &r) {
		return &WireError{Code: CodeUnrepresentable, Family: clip(string(r.Family)), Message: clip(r.Detail)}
	}
	reason := err.Error()
	if _, after, ok := strings.Cut(reason, conformance.ErrUnrepresentable.Error()+": "); ok {
		reason = after
	}
	return &WireError{Code: CodeUnrepresentable, Message: clip(reason)}
}

func adapterResult[T any](v T, err error) (any, *WireError) {
	if err != nil {
		return nil, adapterError(err)
	}
	return v, nil
}

func (st *serverState) create(ctx context.Context, params json.RawMessage) (any, *WireError) {
	var p createParams
	if err := unmarshalParams(params, &p); err != nil {
		return nil, invalidParams(MethodCreate)
	}
	st.mu.Lock()
	st.next++
	id := "instance-" + strconv.FormatUint(st.next, 10)
	st.mu.Unlock()
	setup := conformance.Setup{Fixture: p.Fixture, Transport: &remoteTransport{p: st.p, instance: id, timeout: st.srv.TransportTimeout}}
	if p.LocalKVPort {
		setup.LocalKVPort = &remoteKVPort{p: st.p, instance: id, timeout: st.srv.TransportTimeout}
	}
	inst, err := st.srv.Factory.Create(ctx, setup)
	if err != nil || inst.Adapter == nil {
		if inst.Cleanup != nil {
			_ = protect(func() error { return inst.Cleanup(ctx) })
		}
		if werr := unrepresentable(err); werr != nil {
			return nil, werr
		}
		msg := "the factory returned no adapter"
		if err != nil {
			msg = clip(err.Error())
		}
		return nil, &WireError{Code: CodeFactoryFailed, Message: msg}
	}
	st.mu.Lock()
	st.instances[id] = &served{inst: inst}
	st.mu.Unlock()
	res := createResult{Instance: id, ExpectedProjectRoot: inst.ExpectedProjectRoot, Source: inst.Source != nil, PrivacyConfig: inst.PrivacyConfig,
		Limits: inst.Limits, Held: inst.Held}
	_, res.SourceRewrite = inst.Source.(conformance.SourceRewriter)
	_, res.SourceBreak = inst.Source.(conformance.SourceBreaker)
	if port := embeddingPort(inst.Adapter); port != nil {
		res.EmbeddingPort = &embeddingDecl{EmbeddingIdentity: port.Identity()}
	}
	return res, nil
}

// embeddingPort returns a's embedding port, or nil when it has none.
func embeddingPort(a contract.Adapter) contract.EmbeddingPort {
	if p, ok := a.(contract.EmbeddingPortProvider); ok {
		return p.EmbeddingPort()
	}
	return nil
}

func (st *serverState) cleanup(ctx context.Context, params json.RawMessage) (any, *WireError) {
	var p instanceParams
	if err := unmarshalParams(params, &p); err != nil {
		return nil, invalidParams(MethodCleanup)
	}
	st.mu.Lock()
	sv := st.instances[p.Instance]
	delete(st.instances, p.Instance)
	st.mu.Unlock()
	if sv == nil {
		return nil, &WireError{Code: CodeUnknownInstance, Message: "no live instance has this id"}
	}
	if sv.inst.Cleanup == nil {
		return nil, nil
	}
	if err := sv.inst.Cleanup(ctx); err != nil {
		return nil, &WireError{Code: CodeCleanupFailed, Message: clip(err.Error())}
	}
	return nil, nil
}

// remoteTransport is the transport a served instance gets: each Send is a
// transport callback to the harness.
type remoteTransport struct {
	p        *peer
	instance string
	timeout  time.Duration
}

func (t *remoteTransport) Send(ctx context.Context, req contract.TransportRequest) (json.RawMessage, error) {
	var res transportResult
	if err := t.p.call(ctx, t.timeout, MethodTransport, transportParams{Instance: t.instance, Request: req, Call: servedCall(ctx)}, &res); err != nil {
		return nil, err
	}
	return res.Output, nil
}

// remoteKVPort is the local KV runtime port a served instance gets when the
// harness has one: each call is a localKv… callback to the harness.
type remoteKVPort struct {
	p        *peer
	instance string
	timeout  time.Duration
}

var (
	_ localkv.RuntimePort  = (*remoteKVPort)(nil)
	_ localkv.ShutdownPort = (*remoteKVPort)(nil)
)

func (k *remoteKVPort) TryReuse(ctx context.Context, req localkv.ReuseRequest) (localkv.ReuseAnswer, error) {
	var a localkv.ReuseAnswer
	err := k.p.call(ctx, k.timeout, MethodLocalKVTryReuse, kvParams{Instance: k.instance, Request: req, Call: servedCall(ctx)}, &a)
	return a, err
}

func (k *remoteKVPort) FullReplay(ctx context.Context, req localkv.ReuseRequest) (localkv.ReplayAnswer, error) {
	var a localkv.ReplayAnswer
	err := k.p.call(ctx, k.timeout, MethodLocalKVFullReplay, kvParams{Instance: k.instance, Request: req, Call: servedCall(ctx)}, &a)
	return a, err
}

func (k *remoteKVPort) Shutdown(ctx context.Context) error {
	return k.p.call(ctx, k.timeout, MethodLocalKVShutdown, callbackParams{Instance: k.instance, Call: servedCall(ctx)}, nil)
}
