package bridge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
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
	// DefaultMaxHeldBytes bounds the messages held at once when
	// Options.MaxHeldBytes is zero: two lines of the default bound.
	DefaultMaxHeldBytes = 2 * DefaultMaxLineBytes
)

// Bounds on the requests from the other side in flight on one connection:
// at most maxHandlers are served at once, and at most maxQueued more wait
// for a handler. A peer that sends a request beyond them breaks the
// connection (ErrProtocol): it floods, or it stopped reading the responses
// while it goes on sending requests. The bounds keep what one connection
// costs fixed — a handler is one goroutine — whatever the peer sends.
const (
	maxHandlers = 64
	maxQueued   = 1024
)

// Options tune a connection. The zero value uses the defaults.
type Options struct {
	// CallTimeout bounds each call, from sending the request to reading its
	// response, and each write to an adapter process; a call or a write
	// that times out kills the adapter process. A
	// completion's bound includes the transport call it makes, so it must
	// exceed the slowest provider. Zero means DefaultCallTimeout.
	CallTimeout time.Duration
	// MaxLineBytes bounds each line read or written, without its newline. A
	// longer line read breaks the connection (the process is killed); a
	// longer line to write fails that call only. Zero means
	// DefaultMaxLineBytes.
	MaxLineBytes int
	// MaxHeldBytes bounds the bytes of all the messages read and held at
	// once — by one Client, or by all the adapter processes of one
	// factory (NewFactory, Pipe): an answer from the line that carried it
	// until its call has decoded it, a request of the other side until it
	// is answered. An answer that would pass the bound is dropped, and its
	// call fails with an error matching ErrHeldTooLarge that names the
	// bound; the connection goes on. A request that would pass it breaks
	// the connection (the process is killed). Zero means
	// DefaultMaxHeldBytes; a bound below MaxLineBytes also refuses a single
	// answer longer than itself.
	MaxHeldBytes int
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

func (o Options) maxHeld() int {
	if o.MaxHeldBytes > 0 {
		return o.MaxHeldBytes
	}
	return DefaultMaxHeldBytes
}

// handlerFunc answers one request from the other side. The result is
// encoded with encoding/json; a nil result is written as null.
type handlerFunc func(ctx context.Context, method string, params json.RawMessage) (any, *WireError)

type reply struct {
	result json.RawMessage
	err    *WireError
	fail   error // the answer was dropped: it did not fit the held bound
	held   int   // bytes of the held bound the answer takes until released
}

// readDeadliner is an input whose blocked reads a deadline can end: a
// pollable *os.File, such as the pipe from a child process.
type readDeadliner interface {
	SetReadDeadline(t time.Time) error
}

// peer is one end of a connection: it writes requests and responses, and
// whoever holds the read token reads lines, routing responses to waiting
// calls and requests to the handler. Both sides of the protocol use it.
//
// The design keeps goroutine hand-offs off the path of a call: across
// processes, waking another goroutine costs about as much as the round
// trip itself.
//
// Only the holder of the read token (token holds one value while it is
// free) reads p.in, so the bufio state, line and partial need no lock; the
// channel orders one holder's reads before the next holder's. There are two
// kinds of holder:
//
//   - The read loop takes the token and never gives it back. It runs from
//     the start when the input has no read deadlines (an io.Pipe, or the
//     server's input), and every response reaches its call through the
//     call's channel. At a request, the goroutine running the loop hands
//     the loop to an idle worker and serves the request itself, so a
//     request does not wait for a worker to wake; the loop (and the duty to
//     close done when it ends) moves from goroutine to goroutine this way.
//   - When the input has read deadlines (lead is set: the pipe from a child
//     process), calls read for themselves: a call that finds the token free
//     after sending its request becomes the leader and reads lines until its
//     own response arrives, with the read deadline set to its own timeout.
//     Responses to other calls go to their channels, and requests to
//     workers (the leader must go on reading). The other calls wait on their
//     channel, their timer and the token, and whichever comes first wins; a
//     call that took the token looks at its channel before reading. A
//     cancelled context ends the leader's read by moving the deadline to
//     now. Such a deadline may fire for a later holder instead; a holder
//     whose own time has not come reads on, and the partial line read so
//     far is kept across the interruption. With no call in flight nothing
//     reads, so a child that dies while idle is noticed by the next call or
//     by Close, which starts the read loop to read the output to its end.
type peer struct {
	in      *bufio.Reader
	out     io.Writer
	maxLine int
	held    *heldBudget // the bound on the messages held at once
	handle  handlerFunc
	onBreak func(error)
	// eofErr is the cause recorded when the input ends; nil means a clean
	// end of input (the server side).
	eofErr error
	// writeTimeout, when positive and out has write deadlines (the pipe to
	// a child process), bounds each write: a peer that stops reading its
	// input breaks the connection instead of blocking the writers.
	writeTimeout time.Duration

	wmu sync.Mutex

	mu        sync.Mutex
	nextID    uint64
	pending   map[uint64]chan reply
	abandoned map[uint64]struct{}
	ended     map[uint64]struct{}           // awaited calls whose caller gave up (callAwaited)
	callers   map[uint64]context.Context    // the caller's context of each call waiting
	serving   map[uint64]context.CancelFunc // the other side's requests being served
	err       error
	ending    bool

	broken   chan struct{}
	ctx      context.Context
	cancel   context.CancelFunc
	done     chan struct{} // closed when the read loop ends
	handlers sync.WaitGroup
	work     chan job   // idle workers receive jobs here
	active   int        // requests being served; p.mu
	queued   []envelope // requests waiting for a handler; p.mu

	token     chan struct{} // holds a value while no one reads p.in
	lead      bool          // calls read for themselves; see peer
	deadliner readDeadliner // p.in's source when lead is set
	loopOnce  sync.Once
	line      []byte // the line being read; owned by the token holder
	partial   bool   // line holds the start of a line a deadline interrupted
}

func newPeer(in io.Reader, out io.Writer, maxLine int, held *heldBudget, handle handlerFunc, onBreak func(error)) *peer {
	ctx, cancel := context.WithCancel(context.Background())
	// A buffer no larger than the bound makes ReadSlice return as soon as a
	// line outgrows it, even when the rest of the line never comes.
	size := min(64<<10, maxLine+1)
	p := &peer{
		in:        bufio.NewReaderSize(in, size),
		out:       out,
		maxLine:   maxLine,
		held:      held,
		handle:    handle,
		onBreak:   onBreak,
		pending:   make(map[uint64]chan reply),
		abandoned: make(map[uint64]struct{}),
		ended:     make(map[uint64]struct{}),
		callers:   make(map[uint64]context.Context),
		serving:   make(map[uint64]context.CancelFunc),
		broken:    make(chan struct{}),
		ctx:       ctx,
		cancel:    cancel,
		done:      make(chan struct{}),
		work:      make(chan job),
		token:     make(chan struct{}, 1),
	}
	p.token <- struct{}{}
	return p
}

// leadReads makes calls read for themselves when the input has read
// deadlines, and reports whether it does; call it before any call.
func (p *peer) leadReads(in io.Reader) bool {
	if d, ok := in.(readDeadliner); ok && d.SetReadDeadline(time.Time{}) == nil {
		p.lead, p.deadliner = true, d
	}
	return p.lead
}

// startReadLoop starts the read loop once. Without lead it must run from
// the start; with lead, Close starts it to read the output to its end.
func (p *peer) startReadLoop() {
	p.loopOnce.Do(func() { go p.readLoop() })
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

// readLoop takes the read token for good and runs the read loop until the
// input ends or the connection breaks.
func (p *peer) readLoop() {
	<-p.token
	if p.lead {
		_ = p.deadliner.SetReadDeadline(time.Time{})
	}
	p.read()
}

// job is work for a worker: a request to serve, or the read loop.
type job struct {
	env  envelope
	read bool
}

// read runs the read loop: it reads lines, delivers responses and, at the
// first request, hands the read loop to a worker and serves the request
// itself, so that a request is served without waiting for another
// goroutine to wake. The read loop closes done when it ends.
func (p *peer) read() {
	for {
		line, err := p.readLine()
		if err != nil {
			if p.lead && errors.Is(err, os.ErrDeadlineExceeded) {
				// A cancelled call's deadline, meant for a leader before us.
				_ = p.deadliner.SetReadDeadline(time.Time{})
				continue
			}
			p.readFailed(err)
			close(p.done)
			return
		}
		if blank(line) {
			continue
		}
		env, dealt, ok := p.receive(line)
		switch {
		case !ok:
			close(p.done)
			return
		case dealt:
		case env.Method != "":
			p.cancelNow(env)
			switch p.admit(env) {
			case admitted:
				p.hand(job{read: true})
				p.work1(env)
				return
			case refused:
				close(p.done)
				return
			}
		case !p.deliver(env):
			close(p.done)
			return
		}
	}
}

// readFailed breaks the connection after a failed read, with the cause the
// failure means.
func (p *peer) readFailed(err error) {
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
}

// receive decodes a line that is not blank, holding its bytes within the
// held bound until the message is done with (env.held). dealt reports
// that the line needs nothing more: an answer that did not fit the bound
// failed its call. ok is false when the line broke the connection.
func (p *peer) receive(line []byte) (env envelope, dealt, ok bool) {
	n := len(line)
	if held, fits := p.held.take(n); !fits {
		return env, true, p.overHeld(line, held)
	}
	if err := json.Unmarshal(line, &env); err != nil {
		p.held.release(n)
		p.fail(parseError(line, err))
		return env, false, false
	}
	env.held = n
	return env, false, true
}

// overHeld deals with a line that does not fit beside the bytes held,
// before anything of it is kept: an answer fails its call and is dropped,
// a request breaks the connection. It reports false when the connection
// broke.
func (p *peer) overHeld(line []byte, held int64) bool {
	var head struct {
		ID     uint64 `json:"id"`
		Method string `json:"method"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		p.fail(parseError(line, err))
		return false
	}
	if head.Method != "" {
		p.fail(fmt.Errorf("%w; the peer sends more at once than this side holds", p.held.tooMuch("a request", len(line), held)))
		return false
	}
	return p.deliverReply(head.ID, reply{fail: p.held.tooMuch("an answer", len(line), held)})
}

func blank(line []byte) bool { return len(bytes.TrimSpace(line)) == 0 }

// dispatch handles one line a leader read: a request goes to a worker, a
// response to its call. It reports false when the line broke the
// connection.
func (p *peer) dispatch(line []byte) bool {
	if blank(line) {
		return true
	}
	env, dealt, ok := p.receive(line)
	switch {
	case !ok:
		return false
	case dealt:
		return true
	case env.Method != "":
		p.cancelNow(env)
		switch p.admit(env) {
		case admitted:
			p.hand(job{env: env})
		case refused:
			return false
		}
		return true
	}
	return p.deliver(env)
}

// Outcomes of admit.
const (
	admitted = iota // the caller has a handler for the request
	queuedUp        // the request waits for a handler
	refused         // beyond the bounds: the connection broke
)

// admit accepts a request within the bounds on requests in flight: it
// takes a handler slot for it, or queues it when all are busy, or breaks
// the connection when the queue is full too.
func (p *peer) admit(env envelope) int {
	p.mu.Lock()
	switch {
	case p.active < maxHandlers:
		p.active++
		p.mu.Unlock()
		p.handlers.Add(1)
		return admitted
	case len(p.queued) < maxQueued:
		p.queued = append(p.queued, env)
		p.mu.Unlock()
		p.handlers.Add(1)
		return queuedUp
	}
	p.mu.Unlock()
	p.held.release(env.held)
	p.fail(fmt.Errorf("%w: more than %d requests in flight (%d served at once); the peer floods or does not read its input", ErrProtocol, maxHandlers+maxQueued, maxHandlers))
	return refused
}

// work1 serves env, then the queued requests, while any wait; then it gives
// its handler slot back. Once the connection broke, queued requests are
// dropped unserved.
func (p *peer) work1(env envelope) {
	for {
		p.serve(env)
		p.mu.Lock()
		for len(p.queued) > 0 && p.err != nil {
			p.held.release(p.queued[0].held)
			p.queued = p.queued[1:]
			p.handlers.Done()
		}
		if len(p.queued) == 0 {
			p.queued = nil
			p.active--
			p.mu.Unlock()
			return
		}
		env = p.queued[0]
		p.queued[0] = envelope{}
		p.queued = p.queued[1:]
		p.mu.Unlock()
	}
}

// hand gives j to an idle worker, or to a new one.
func (p *peer) hand(j job) {
	select {
	case p.work <- j:
	default:
		go p.worker(j)
	}
}

// deliver routes a response to its call; a response to no request breaks
// the connection.
func (p *peer) deliver(env envelope) bool {
	if env.Error == nil && env.Result == nil {
		p.held.release(env.held)
		p.fail(fmt.Errorf("%w: a response has neither result nor error", ErrProtocol))
		return false
	}
	return p.deliverReply(env.ID, reply{result: env.Result, err: env.Error, held: env.held})
}

// deliverReply hands r to call id; the answer to a call abandoned is
// dropped, and one to no request breaks the connection. r goes on the
// call's channel under p.mu (the channel has room for the one reply of
// the call), so that a call that gave up finds it there (discard).
func (p *peer) deliverReply(id uint64, r reply) bool {
	p.mu.Lock()
	if ch, ok := p.pending[id]; ok {
		delete(p.pending, id)
		ch <- r
		p.mu.Unlock()
		return true
	}
	_, gone := p.abandoned[id]
	delete(p.abandoned, id)
	p.mu.Unlock()
	p.held.release(r.held)
	if !gone {
		p.fail(fmt.Errorf("%w: a response names request id %d, which is not pending", ErrProtocol, id))
		return false
	}
	return true
}

// discard is called by call id when it gives up (its connection broke,
// or it was abandoned): an answer that reached it meanwhile is dropped,
// and what it held given back.
func (p *peer) discard(id uint64, ch chan reply) {
	p.mu.Lock()
	delete(p.pending, id)
	var r reply
	select {
	case r = <-ch:
	default:
	}
	p.mu.Unlock()
	p.held.release(r.held)
}

// readLine returns the next line without its newline; the slice is valid
// until the next call. A read that passes its deadline keeps what it read,
// and the next call goes on with that line.
func (p *peer) readLine() ([]byte, error) {
	if !p.partial {
		p.line = p.line[:0]
	}
	p.partial = false
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
			if errors.Is(err, os.ErrDeadlineExceeded) {
				p.line = append(p.line, frag...)
				p.partial = true
				return nil, err
			}
			if err == io.EOF && len(p.line)+len(frag) > 0 {
				return nil, fmt.Errorf("%w: the output ended inside a line", ErrProtocol)
			}
			return nil, err
		}
	}
}

// worker runs first, then every job handed to it while idle, until the
// connection ends. Reusing workers keeps their grown stacks: a fresh
// goroutine per request spends much of a short call growing its stack.
func (p *peer) worker(first job) {
	p.run(first)
	for {
		select {
		case j := <-p.work:
			p.run(j)
		case <-p.ctx.Done():
			return
		}
	}
}

func (p *peer) run(j job) {
	if j.read {
		p.read()
	} else {
		p.work1(j.env)
	}
}

// cancelNow acts on a cancel as soon as it is read, so that it never waits
// for a handler behind the request it cancels: the request it names, when
// it is being served, has its context cancelled. The cancel is then
// answered like any request, by a handler (a reader never writes: two
// peers whose readers both wrote could block each other for good).
func (p *peer) cancelNow(env envelope) {
	var c cancelParams
	if env.Method != MethodCancel || unmarshalParams(env.Params, &c) != nil {
		return
	}
	p.mu.Lock()
	cancel := p.serving[c.ID]
	p.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// answerCancel is the answer to a cancel: null, or an error for params
// that do not have its shape.
func answerCancel(params json.RawMessage) *WireError {
	var c cancelParams
	if unmarshalParams(params, &c) != nil {
		return &WireError{Code: CodeInvalidParams, Message: "cancel params do not have the protocol's shape"}
	}
	return nil
}

// callKey is the context key under which a handler's context holds the id
// of the request it serves.
type callKey struct{}

// servedCall returns the id of the other side's request whose handler
// ctx belongs to, if any.
func servedCall(ctx context.Context) uint64 {
	id, _ := ctx.Value(callKey{}).(uint64)
	return id
}

// callerContext returns the context of the caller of call id while the
// call is live: a callback serving the call runs under it, so that it sees
// the caller's cancellation as it would in process.
func (p *peer) callerContext(id uint64) (context.Context, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.pending[id]
	_, ended := p.ended[id]
	ctx := p.callers[id]
	return ctx, ok && !ended && ctx != nil
}

// endCall ends the awaited call id for its callbacks and tells the other
// side (cancel); its answer is still awaited. The answer to the cancel is
// dropped.
func (p *peer) endCall(id uint64) {
	p.mu.Lock()
	if _, ok := p.pending[id]; !ok || p.err != nil {
		p.mu.Unlock()
		return
	}
	p.ended[id] = struct{}{}
	p.writeCancelLocked(id)
}

// serve answers one request. Its handler gets a context of its own,
// cancelled by a cancel naming the request, when the handler returns, or
// when the connection ends.
func (p *peer) serve(env envelope) {
	defer p.handlers.Done()
	defer p.held.release(env.held)
	var res any
	var werr *WireError
	if env.Method == MethodCancel {
		werr = answerCancel(env.Params)
	} else {
		ctx, cancel := context.WithCancel(context.WithValue(p.ctx, callKey{}, env.ID))
		p.mu.Lock()
		p.serving[env.ID] = cancel
		p.mu.Unlock()
		res, werr = p.handle(ctx, env.Method, env.Params)
		p.mu.Lock()
		delete(p.serving, env.ID)
		p.mu.Unlock()
		cancel()
	}
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
	if raw, ok := jsonw.Document(v); ok && raw != nil {
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
		if env.Error.Family != "" {
			b = append(b, `,"family":`...)
			b = jsonw.AppendString(b, env.Error.Family)
		}
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
	wd, timed := p.out.(writeDeadliner)
	timed = timed && p.writeTimeout > 0
	if timed {
		_ = wd.SetWriteDeadline(time.Now().Add(p.writeTimeout))
	}
	_, err := p.out.Write(b)
	p.wmu.Unlock()
	switch {
	case err == nil:
		return nil
	case timed && errors.Is(err, os.ErrDeadlineExceeded):
		p.fail(fmt.Errorf("%w: a write to the peer did not finish within %s: it does not read its input", ErrTimeout, p.writeTimeout))
	default:
		p.fail(fmt.Errorf("%w: writing to the peer failed", ErrExited))
	}
	return p.brokenErr()
}

// writeDeadliner is an output whose blocked writes a deadline can end.
type writeDeadliner interface {
	SetWriteDeadline(t time.Time) error
}

// call sends a request and decodes its result into result (when non-nil).
// timeout zero means none beyond ctx. A timeout breaks the connection; a
// cancelled ctx abandons the call only.
func (p *peer) call(ctx context.Context, timeout time.Duration, method string, params any, result any) error {
	return p.do(ctx, false, timeout, method, params, result)
}

// callAwaited is call for a request whose answer the caller needs even
// when its ctx ends: the request is sent also when ctx has ended already,
// and when ctx ends the other side is told (cancel) and the call ends for
// its callbacks (live reports false, so they are refused call-ended), but
// the answer is still awaited within timeout — the other side answers
// what it answers for a context that ended, as in process.
func (p *peer) callAwaited(ctx context.Context, timeout time.Duration, method string, params any, result any) error {
	return p.do(ctx, true, timeout, method, params, result)
}

func (p *peer) do(ctx context.Context, awaited bool, timeout time.Duration, method string, params any, result any) error {
	if err := p.brokenErr(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil && !awaited {
		return fmt.Errorf("bridge: %s: %w", method, err) // never sent
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
	if awaited && ctx.Err() != nil {
		p.ended[id] = struct{}{} // no callback of it is served
	}
	p.callers[id] = ctx
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.callers, id)
		p.mu.Unlock()
	}()
	if err := p.write(envelope{ID: id, Method: method, Params: raw}); err != nil {
		p.mu.Lock()
		delete(p.pending, id)
		p.mu.Unlock()
		return fmt.Errorf("bridge: %s: %w", method, err)
	}
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	waitCtx := ctx
	if awaited {
		waitCtx = context.WithoutCancel(ctx)
		stop := context.AfterFunc(ctx, func() { p.endCall(id) })
		defer func() {
			stop()
			p.mu.Lock()
			delete(p.ended, id)
			p.mu.Unlock()
		}()
	}
	var r reply
	select {
	case <-p.tokenIfLead():
		r, err = p.leadUntil(waitCtx, id, ch, method, timeout, deadline)
	default:
		r, err = p.wait(waitCtx, id, ch, method, timeout, deadline)
	}
	if err != nil {
		p.discard(id, ch)
		if ctx.Err() != nil {
			p.sendCancel(id)
		}
		return err
	}
	defer p.held.release(r.held)
	if r.fail != nil {
		return fmt.Errorf("bridge: %s: %w", method, r.fail)
	}
	if r.err != nil {
		return &RemoteError{Method: method, Code: r.err.Code, Message: clip(r.err.Message), Family: clip(r.err.Family)}
	}
	if result != nil {
		if err := json.Unmarshal(r.result, result); err != nil {
			return fmt.Errorf("bridge: %s: %w: the result does not have the method's shape: %s", method, ErrProtocol, clip(err.Error()))
		}
	}
	return nil
}

// tokenIfLead returns the read token's channel when calls read for
// themselves, and nil (never ready) otherwise.
func (p *peer) tokenIfLead() chan struct{} {
	if p.lead {
		return p.token
	}
	return nil
}

// wait waits for call id's reply on ch; it becomes the leader if the read
// token comes free first.
func (p *peer) wait(ctx context.Context, id uint64, ch chan reply, method string, timeout time.Duration, deadline time.Time) (reply, error) {
	var timer <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		timer = t.C
	}
	select {
	case r := <-ch:
		return r, nil
	case <-p.tokenIfLead():
		return p.leadUntil(ctx, id, ch, method, timeout, deadline)
	case <-p.broken:
		return reply{}, p.brokenErr()
	case <-timer:
		p.fail(fmt.Errorf("%w: %s got no response within %s", ErrTimeout, method, timeout))
		return reply{}, p.brokenErr()
	case <-ctx.Done():
		return reply{}, p.abandon(ctx, id, method)
	}
}

// abandon gives up call id after ctx ended: its response, if it comes, is
// dropped. call then tells the other side (sendCancel).
func (p *peer) abandon(ctx context.Context, id uint64, method string) error {
	p.mu.Lock()
	if _, ok := p.pending[id]; ok {
		delete(p.pending, id)
		p.abandoned[id] = struct{}{}
	}
	p.mu.Unlock()
	return fmt.Errorf("bridge: %s: %w", method, ctx.Err())
}

// sendCancel tells the other side that call id, which this side
// abandoned, need not be served any more; the answer to the cancel is
// dropped too. It is sent by the caller, never by a reader.
func (p *peer) sendCancel(id uint64) {
	p.mu.Lock()
	_, gone := p.abandoned[id]
	if !gone || p.err != nil {
		p.mu.Unlock()
		return
	}
	p.writeCancelLocked(id)
}

// writeCancelLocked is called holding p.mu, which it releases: it sends a
// cancel naming call id, whose own answer is dropped.
func (p *peer) writeCancelLocked(id uint64) {
	p.nextID++
	cid := p.nextID
	p.abandoned[cid] = struct{}{}
	p.mu.Unlock()
	params := strconv.AppendUint([]byte(`{"id":`), id, 10)
	_ = p.write(envelope{ID: cid, Method: MethodCancel, Params: append(params, '}')})
}

// leadUntil is called holding the read token; it reads lines until call id's
// reply is on ch, its deadline passes (which breaks the connection), ctx
// ends (which abandons the call) or the connection breaks, and then gives
// the token back.
func (p *peer) leadUntil(ctx context.Context, id uint64, ch chan reply, method string, timeout time.Duration, deadline time.Time) (reply, error) {
	defer func() { p.token <- struct{}{} }()
	if ctx.Done() != nil {
		// End a blocked read when ctx ends. If this runs after the token
		// has passed on, the next holder sees a deadline that is not its
		// own and reads on.
		stop := context.AfterFunc(ctx, func() { _ = p.deadliner.SetReadDeadline(time.Now()) })
		defer stop()
	}
	_ = p.deadliner.SetReadDeadline(deadline)
	for {
		select {
		case r := <-ch:
			return r, nil
		default:
		}
		if err := p.brokenErr(); err != nil {
			return reply{}, err
		}
		if ctx.Err() != nil {
			return reply{}, p.abandon(ctx, id, method)
		}
		line, err := p.readLine()
		if err != nil {
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				p.readFailed(err)
				return reply{}, p.brokenErr()
			}
			if ctx.Err() != nil {
				continue // abandoned above
			}
			if !deadline.IsZero() && !time.Now().Before(deadline) {
				p.fail(fmt.Errorf("%w: %s got no response within %s", ErrTimeout, method, timeout))
				return reply{}, p.brokenErr()
			}
			// Another call's cancellation, meant for an earlier leader.
			_ = p.deadliner.SetReadDeadline(deadline)
			continue
		}
		if !p.dispatch(line) {
			return reply{}, p.brokenErr()
		}
	}
}
