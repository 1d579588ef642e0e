package bridge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/ds4context/adapterkit/internal/jsonw"
)

// Defaults for Options.
const (
	// DefaultCallTimeout bounds every call when Options.CallTimeout is zero.
	DefaultCallTimeout = 5 * time.Second
	// DefaultMaxLineBytes bounds every line when Options.MaxLineBytes is zero.
	DefaultMaxLineBytes = 64 << 20
)

// Options tune a connection. The zero value uses the defaults.
type Options struct {
	// CallTimeout bounds each call, from sending the request to reading its
	// response; a call that times out kills the adapter process. A
	// completion's bound includes the transport call it makes, so it must
	// exceed the slowest provider. Zero means DefaultCallTimeout.
	CallTimeout time.Duration
	// MaxLineBytes bounds each line read or written, without its newline. A
	// longer line read breaks the connection (the process is killed); a
	// longer line to write fails that call only. Zero means
	// DefaultMaxLineBytes.
	MaxLineBytes int
}

func (o Options) callTimeout() time.Duration {
	if o.CallTimeout > 0 {
		return o.CallTimeout
	}
	return DefaultCallTimeout
}

func (o Options) maxLine() int {
	if o.MaxLineBytes > 0 {
		return o.MaxLineBytes
	}
	return DefaultMaxLineBytes
}

// handlerFunc answers one request from the other side. The result is
// encoded with encoding/json; a nil result is written as null.
type handlerFunc func(ctx context.Context, method string, params json.RawMessage) (any, *WireError)

type reply struct {
	result json.RawMessage
	err    *WireError
}

// peer is one end of a connection: it writes requests and responses, and a
// read loop routes responses to waiting calls and requests to the handler.
// Both sides of the protocol use it.
type peer struct {
	in      *bufio.Reader
	out     io.Writer
	maxLine int
	handle  handlerFunc
	onBreak func(error)
	// eofErr is the cause recorded when the input ends; nil means a clean
	// end of input (the server side).
	eofErr error

	wmu sync.Mutex

	mu        sync.Mutex
	nextID    uint64
	pending   map[uint64]chan reply
	abandoned map[uint64]struct{}
	err       error
	ending    bool

	broken   chan struct{}
	ctx      context.Context
	cancel   context.CancelFunc
	done     chan struct{} // closed when the read loop returns
	handlers sync.WaitGroup
	work     chan envelope // idle workers receive requests here
	line     []byte
}

func newPeer(in io.Reader, out io.Writer, maxLine int, handle handlerFunc, onBreak func(error)) *peer {
	ctx, cancel := context.WithCancel(context.Background())
	// A buffer no larger than the bound makes ReadSlice return as soon as a
	// line outgrows it, even when the rest of the line never comes.
	size := min(64<<10, maxLine+1)
	return &peer{
		in:        bufio.NewReaderSize(in, size),
		out:       out,
		maxLine:   maxLine,
		handle:    handle,
		onBreak:   onBreak,
		pending:   make(map[uint64]chan reply),
		abandoned: make(map[uint64]struct{}),
		broken:    make(chan struct{}),
		ctx:       ctx,
		cancel:    cancel,
		done:      make(chan struct{}),
		work:      make(chan envelope),
	}
}

// fail breaks the connection with cause, once: every waiting and later call
// fails, the handler context is cancelled and onBreak runs.
func (p *peer) fail(cause error) {
	p.mu.Lock()
	if p.err != nil {
		p.mu.Unlock()
		return
	}
	p.err = cause
	close(p.broken)
	p.mu.Unlock()
	p.cancel()
	if p.onBreak != nil {
		p.onBreak(cause)
	}
}

// end marks the connection as ending on purpose: the end of input that
// follows is not a failure of the peer.
func (p *peer) end() {
	p.mu.Lock()
	p.ending = true
	p.mu.Unlock()
}

// brokenErr returns the error calls fail with once broken, or nil.
func (p *peer) brokenErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		return nil
	}
	return &brokenError{cause: p.err}
}

// readLoop reads lines until the input ends or the connection breaks.
func (p *peer) readLoop() {
	defer close(p.done)
	for {
		line, err := p.readLine()
		if err != nil {
			p.mu.Lock()
			ending := p.ending
			p.mu.Unlock()
			switch {
			case ending:
				p.fail(errClientClosed)
			case errors.Is(err, io.EOF) && p.eofErr == nil:
				p.fail(io.EOF)
			case errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe):
				p.fail(p.eofErr)
			default:
				p.fail(err)
			}
			return
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var env envelope
		if err := json.Unmarshal(line, &env); err != nil {
			p.fail(fmt.Errorf("%w: a line is not a JSON protocol message", ErrProtocol))
			return
		}
		if env.Method != "" {
			p.handlers.Add(1)
			select {
			case p.work <- env: // an idle worker takes it
			default:
				go p.worker(env)
			}
			continue
		}
		if !p.deliver(env) {
			return
		}
	}
}

// deliver routes a response to its call; a response to no request breaks
// the connection.
func (p *peer) deliver(env envelope) bool {
	if env.Error == nil && env.Result == nil {
		p.fail(fmt.Errorf("%w: a response has neither result nor error", ErrProtocol))
		return false
	}
	p.mu.Lock()
	ch, ok := p.pending[env.ID]
	if ok {
		delete(p.pending, env.ID)
	} else if _, gone := p.abandoned[env.ID]; gone {
		delete(p.abandoned, env.ID)
		p.mu.Unlock()
		return true
	}
	p.mu.Unlock()
	if !ok {
		p.fail(fmt.Errorf("%w: a response names request id %d, which is not pending", ErrProtocol, env.ID))
		return false
	}
	ch <- reply{result: env.Result, err: env.Error}
	return true
}

// readLine returns the next line without its newline; the slice is valid
// until the next call.
func (p *peer) readLine() ([]byte, error) {
	p.line = p.line[:0]
	for {
		frag, err := p.in.ReadSlice('\n')
		if len(p.line)+len(frag) > p.maxLine+1 {
			return nil, fmt.Errorf("%w: more than %d bytes", ErrLineTooLong, p.maxLine)
		}
		switch err {
		case nil:
			if len(p.line) == 0 {
				return frag[:len(frag)-1], nil
			}
			p.line = append(p.line, frag...)
			return p.line[:len(p.line)-1], nil
		case bufio.ErrBufferFull:
			p.line = append(p.line, frag...)
		default:
			if err == io.EOF && len(p.line)+len(frag) > 0 {
				return nil, fmt.Errorf("%w: the output ended inside a line", ErrProtocol)
			}
			return nil, err
		}
	}
}

// worker answers first, then every request handed to it while idle, until
// the connection ends. Reusing workers keeps their grown stacks: a fresh
// goroutine per request spends much of a short call growing its stack.
func (p *peer) worker(first envelope) {
	p.serve(first)
	for {
		select {
		case env := <-p.work:
			p.serve(env)
		case <-p.ctx.Done():
			return
		}
	}
}

// serve answers one request.
func (p *peer) serve(env envelope) {
	defer p.handlers.Done()
	res, werr := p.handle(p.ctx, env.Method, env.Params)
	var raw []byte
	if werr == nil {
		var err error
		if raw, err = marshal(res); err != nil {
			werr = &WireError{Code: CodeAdapterError, Message: "the result cannot be encoded as JSON"}
		}
	}
	out := envelope{ID: env.ID, Result: raw, Error: werr}
	if werr != nil {
		out.Result = nil
	}
	if err := p.write(out); errors.Is(err, ErrLineTooLong) {
		_ = p.write(envelope{ID: env.ID, Error: &WireError{Code: CodeResponseTooLarge, Message: "the response exceeds the line bound"}})
	}
}

// marshal encodes v as JSON without HTML escaping; nil is null.
func marshal(v any) ([]byte, error) {
	if v == nil {
		return []byte("null"), nil
	}
	if raw, ok := v.(json.RawMessage); ok && raw != nil {
		if !json.Valid(raw) {
			return nil, fmt.Errorf("%w: invalid JSON", ErrUninspectable)
		}
		return raw, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// write sends one envelope as a line.
func (p *peer) write(env envelope) error {
	b := make([]byte, 0, 64+len(env.Params)+len(env.Result))
	b = append(b, `{"id":`...)
	b = strconv.AppendUint(b, env.ID, 10)
	if env.Method != "" {
		b = append(b, `,"method":`...)
		b = jsonw.AppendString(b, env.Method)
		b = append(b, `,"params":`...)
		b = append(b, env.Params...)
	}
	if env.Error != nil {
		b = append(b, `,"error":{"code":`...)
		b = jsonw.AppendString(b, env.Error.Code)
		b = append(b, `,"message":`...)
		b = jsonw.AppendString(b, env.Error.Message)
		b = append(b, '}')
	} else if env.Method == "" {
		b = append(b, `,"result":`...)
		b = append(b, env.Result...)
	}
	b = append(b, '}')
	if len(b) > p.maxLine {
		return fmt.Errorf("%w: more than %d bytes", ErrLineTooLong, p.maxLine)
	}
	b = append(b, '\n')
	p.wmu.Lock()
	_, err := p.out.Write(b)
	p.wmu.Unlock()
	if err != nil {
		p.fail(fmt.Errorf("%w: writing to the peer failed", ErrExited))
		return p.brokenErr()
	}
	return nil
}

// call sends a request and decodes its result into result (when non-nil).
// timeout zero means none beyond ctx. A timeout breaks the connection; a
// cancelled ctx abandons the call only.
func (p *peer) call(ctx context.Context, timeout time.Duration, method string, params any, result any) error {
	if err := p.brokenErr(); err != nil {
		return err
	}
	raw, err := marshal(params)
	if err != nil {
		return fmt.Errorf("bridge: %s: params cannot be encoded: %w", method, ErrUninspectable)
	}
	ch := make(chan reply, 1)
	p.mu.Lock()
	p.nextID++
	id := p.nextID
	p.pending[id] = ch
	p.mu.Unlock()
	if err := p.write(envelope{ID: id, Method: method, Params: raw}); err != nil {
		p.mu.Lock()
		delete(p.pending, id)
		p.mu.Unlock()
		return fmt.Errorf("bridge: %s: %w", method, err)
	}
	var timer <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timer = t.C
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return &RemoteError{Method: method, Code: r.err.Code, Message: clip(r.err.Message)}
		}
		if result != nil {
			if err := json.Unmarshal(r.result, result); err != nil {
				return fmt.Errorf("bridge: %s: %w: the result does not have the method's shape: %s", method, ErrProtocol, clip(err.Error()))
			}
		}
		return nil
	case <-p.broken:
		return p.brokenErr()
	case <-timer:
		p.fail(fmt.Errorf("%w: %s got no response within %s", ErrTimeout, method, timeout))
		return p.brokenErr()
	case <-ctx.Done():
		p.mu.Lock()
		if _, ok := p.pending[id]; ok {
			delete(p.pending, id)
			p.abandoned[id] = struct{}{}
		}
		p.mu.Unlock()
		return fmt.Errorf("bridge: %s: %w", method, ctx.Err())
	}
}
