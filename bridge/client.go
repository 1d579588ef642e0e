package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/gen"
	"github.com/ds4context/adapterkit/contract/localkv"
)

// Client is the harness end of one connection to an adapter server. It
// creates instances whose adapters call the server, and answers the
// server's transport callbacks with each instance's transport. A Client is
// safe for concurrent use.
type Client struct {
	p       *peer
	timeout time.Duration
	closer  func() error

	mu        sync.Mutex
	instances map[string]harnessSide
	factory   string
	closed    bool
}

// NewClient starts a client reading responses from r and writing requests to
// w. Call Hello before anything else. Close closes w, and r too when it is an
// io.Closer, then waits for the read loop to end — when r is not an
// io.Closer, that is when the server ends its output. A server that breaks
// the protocol, or a call that times out, closes them as well.
func NewClient(r io.Reader, w io.WriteCloser, opts Options) *Client {
	var once sync.Once
	closeBoth := func() error {
		var err error
		once.Do(func() {
			err = w.Close()
			if rc, ok := r.(io.Closer); ok {
				err = errors.Join(err, rc.Close())
			}
		})
		return err
	}
	return newClient(r, w, opts, nil, func(error) { _ = closeBoth() }, closeBoth)
}

// newClient starts a client; onBreak runs when the connection breaks, close
// when the client is closed. held bounds the messages it holds at once
// (shared by the connections of a factory); nil gives it a bound of its
// own, of opts.MaxHeldBytes.
func newClient(r io.Reader, w io.Writer, opts Options, held *heldBudget, onBreak func(error), closer func() error) *Client {
	c := &Client{timeout: opts.callTimeout(), closer: closer, instances: make(map[string]harnessSide)}
	if held == nil {
		held = newHeldBudget(opts.maxHeld())
	}
	c.p = newPeer(r, w, opts.maxLine(), held, c.handle, onBreak)
	c.p.eofErr = fmt.Errorf("%w: its output ended", ErrExited)
	c.p.writeTimeout = c.timeout
	if !c.p.leadReads(r) {
		c.p.startReadLoop()
	}
	return c
}

// harnessSide is what the harness keeps for one instance: the boundaries
// the adapter process calls back.
type harnessSide struct {
	transport contract.Transport
	port      localkv.RuntimePort
}

// handle answers the server's requests: transport and local KV callbacks.
func (c *Client) handle(ctx context.Context, method string, params json.RawMessage) (any, *WireError) {
	var p kvParams // transport params have the same instance member
	switch method {
	case MethodTransport, MethodLocalKVTryReuse, MethodLocalKVFullReplay, MethodLocalKVShutdown:
	default:
		return nil, &WireError{Code: CodeUnknownMethod, Message: "the harness answers transport and local KV callbacks only"}
	}
	var tp transportParams
	var err error
	if method == MethodTransport {
		err = unmarshalParams(params, &tp)
		p.Instance = tp.Instance
	} else {
		err = unmarshalParams(params, &p)
	}
	if err != nil {
		return nil, &WireError{Code: CodeInvalidParams, Message: method + " params do not have the protocol's shape"}
	}
	if call := max(tp.Call, p.Call); call != 0 {
		caller, ok := c.p.callerContext(call)
		if !ok {
			return nil, &WireError{Code: CodeCallEnded, Message: "the call this callback serves has ended"}
		}
		// The callback runs under the caller's context, as a transport
		// called in process does: it ends the moment the caller gives up
		// (a context derived from the caller's sees that at once), and
		// when the server cancels the callback or the connection ends.
		handler := ctx
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(caller)
		defer cancel()
		defer context.AfterFunc(handler, cancel)()
	}
	c.mu.Lock()
	side, ok := c.instances[p.Instance]
	c.mu.Unlock()
	if !ok {
		return nil, &WireError{Code: CodeUnknownInstance, Message: "no live instance has this id"}
	}
	if method == MethodTransport {
		out, err := side.transport.Send(ctx, tp.Request)
		if err != nil {
			return nil, &WireError{Code: CodeTransportFailed, Message: "completion transport failed"}
		}
		if out == nil {
			out = []byte("null")
		}
		return transportResult{Output: out}, nil
	}
	if side.port == nil {
		return nil, &WireError{Code: CodeLocalKVPortFailed, Message: "the harness has no local KV port for this instance"}
	}
	portFailed := &WireError{Code: CodeLocalKVPortFailed, Message: "local KV runtime port failed"}
	switch method {
	case MethodLocalKVTryReuse:
		a, err := side.port.TryReuse(ctx, p.Request)
		if err != nil {
			return nil, portFailed
		}
		return a, nil
	case MethodLocalKVFullReplay:
		a, err := side.port.FullReplay(ctx, p.Request)
		if err != nil {
			return nil, portFailed
		}
		return a, nil
	}
	if sp, ok := side.port.(localkv.ShutdownPort); ok {
		if err := sp.Shutdown(ctx); err != nil {
			return nil, portFailed
		}
	}
	return nil, nil
}

// Hello negotiates the protocol version and returns the name the server's
// factory reports. A server that does not speak ProtocolVersion yields an
// error matching ErrUnsupportedVersion.
func (c *Client) Hello(ctx context.Context) (string, error) {
	var res helloResult
	if err := c.p.call(ctx, c.timeout, MethodHello, helloParams{Protocol: ProtocolVersion}, &res); err != nil {
		return "", err
	}
	if res.Protocol != ProtocolVersion {
		return "", fmt.Errorf("%w: the server answered hello with another version", ErrUnsupportedVersion)
	}
	c.mu.Lock()
	c.factory = res.Factory
	c.mu.Unlock()
	return res.Factory, nil
}

// FactoryName returns the name the server reported in Hello.
func (c *Client) FactoryName() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.factory
}

// Create asks the server for a new instance holding setup.Fixture; the
// instance's transport callbacks go to setup.Transport, and its local KV
// callbacks to setup.LocalKVPort (when set, the server's factory is given a
// port that calls back). The instance's
// Cleanup asks the server to release the instance; it does not close the
// client.
func (c *Client) Create(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
	var res createResult
	params := createParams{Fixture: setup.Fixture, LocalKVPort: setup.LocalKVPort != nil}
	if err := c.p.call(ctx, c.timeout, MethodCreate, params, &res); err != nil {
		return conformance.Instance{}, refusal(err)
	}
	if res.Instance == "" {
		return conformance.Instance{}, fmt.Errorf("bridge: create: %w: the result names no instance", ErrProtocol)
	}
	if res.EmbeddingPort != nil && res.EmbeddingPort.MaxBatch < 0 {
		return conformance.Instance{}, fmt.Errorf("bridge: create: %w: the embedding port's maxBatch is negative", ErrProtocol)
	}
	c.mu.Lock()
	c.instances[res.Instance] = harnessSide{transport: setup.Transport, port: setup.LocalKVPort}
	c.mu.Unlock()
	a := &remoteAdapter{c: c, id: res.Instance, embedding: res.EmbeddingPort}
	cleanup := func(ctx context.Context) error {
		defer func() {
			c.mu.Lock()
			delete(c.instances, res.Instance)
			c.mu.Unlock()
		}()
		return c.p.call(ctx, c.timeout, MethodCleanup, instanceParams{Instance: res.Instance}, nil)
	}
	inst := conformance.Instance{Adapter: a, ExpectedProjectRoot: res.ExpectedProjectRoot, Cleanup: cleanup, PrivacyConfig: res.PrivacyConfig,
		Limits: res.Limits, Held: res.Held}
	if res.Source {
		inst.Source = newRemoteSource(remoteSource{c: c, id: res.Instance}, res.SourceRewrite, res.SourceBreak)
	}
	return inst, nil
}

// remoteSource is the source hook of an instance in the adapter process.
type remoteSource struct {
	c  *Client
	id string
}

func (s remoteSource) Append(ctx context.Context, msg contract.Message) error {
	return refusal(s.c.p.call(ctx, s.c.timeout, MethodSourceAppend, sourceAppendParams{Instance: s.id, Message: msg}, nil))
}

// refusal returns err, or, when the adapter process answered
// unrepresentable, the refusal it names (conformance.Unrepresentable).
func refusal(err error) error {
	var re *RemoteError
	if !errors.As(err, &re) || re.Code != CodeUnrepresentable {
		return err
	}
	if re.Message == "" {
		return conformance.Unrepresentable(gen.Family(re.Family))
	}
	return conformance.Unrepresentable(gen.Family(re.Family), re.Message)
}

func (s remoteSource) Corrupt(ctx context.Context) error {
	return s.c.p.call(ctx, s.c.timeout, MethodSourceCorrupt, instanceParams{Instance: s.id}, nil)
}

func (s remoteSource) rewrite(ctx context.Context, msg contract.Message) error {
	return refusal(s.c.p.call(ctx, s.c.timeout, MethodSourceRewrite, sourceAppendParams{Instance: s.id, Message: msg}, nil))
}

func (s remoteSource) breakHistory(ctx context.Context, d conformance.Damage) error {
	err := s.c.p.call(ctx, s.c.timeout, MethodSourceBreak, sourceBreakParams{Instance: s.id, Damage: d}, nil)
	var re *RemoteError
	if errors.As(err, &re) && re.Code == CodeUnsupported {
		return fmt.Errorf("%w: %w", errors.ErrUnsupported, err)
	}
	return err
}

func (s remoteSource) repair(ctx context.Context) error {
	return s.c.p.call(ctx, s.c.timeout, MethodSourceRepair, instanceParams{Instance: s.id}, nil)
}

// newRemoteSource returns the source hook of an instance, implementing
// conformance.SourceRewriter and conformance.SourceBreaker exactly when the
// adapter process says its hook does (the checks skip what needs one by
// asking for the interface).
func newRemoteSource(s remoteSource, rewrite, brk bool) conformance.Source {
	switch {
	case rewrite && brk:
		return remoteRewritingBreakingSource{remoteRewritingSource{s}}
	case rewrite:
		return remoteRewritingSource{s}
	case brk:
		return remoteBreakingSource{s}
	}
	return s
}

// remoteRewritingSource is a source hook that also rewrites a message in
// place: a conformance.SourceRewriter.
type remoteRewritingSource struct{ remoteSource }

func (s remoteRewritingSource) Rewrite(ctx context.Context, msg contract.Message) error {
	return s.rewrite(ctx, msg)
}

// remoteBreakingSource is a source hook that also damages and repairs the
// history: a conformance.SourceBreaker.
type remoteBreakingSource struct{ remoteSource }

func (s remoteBreakingSource) Break(ctx context.Context, d conformance.Damage) error {
	return s.breakHistory(ctx, d)
}

func (s remoteBreakingSource) Repair(ctx context.Context) error { return s.repair(ctx) }

// remoteRewritingBreakingSource is both.
type remoteRewritingBreakingSource struct{ remoteRewritingSource }

func (s remoteRewritingBreakingSource) Break(ctx context.Context, d conformance.Damage) error {
	return s.breakHistory(ctx, d)
}

func (s remoteRewritingBreakingSource) Repair(ctx context.Context) error { return s.repair(ctx) }

// Err returns the error that broke the connection, or nil while it works.
func (c *Client) Err() error { return c.p.brokenErr() }

// Close ends the connection: later calls fail with ErrUnavailable. It
// closes the output, and waits for the read loop and for the transport
// callbacks in flight.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	c.p.end()
	c.p.startReadLoop() // reads the output to its end
	err := c.closer()
	c.p.fail(errClientClosed)
	<-c.p.done
	c.p.handlers.Wait()
	return err
}

var errClientClosed = errors.New("bridge: the client was closed")
