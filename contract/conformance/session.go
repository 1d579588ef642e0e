package conformance

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/localkv"
)

// Session is one adapter instance under test: created by a factory from a
// fixture and a fresh RecordingTransport. Every call through Adapter is
// bounded by the call timeout of the run (DefaultCallTimeout unless
// WithCallTimeout says otherwise): a call that does not return in time
// panics with an error naming the method and the bound, which a check
// reports as its failure. A Session is not safe for concurrent use, but its
// Adapter is.
type Session struct {
	fixture   Fixture
	transport *RecordingTransport
	instance  Instance
	adapter   *boundedAdapter
	baseline  *contract.HistorySnapshot
	closed    bool
	held      // the holding differences of the instance's held history
}

// Start creates an instance from factory with the conformance fixture
// (NewFixture) and a new RecordingTransport, for callers writing checks of
// their own. A factory error, a panic in Create, a Create that does not
// return within the call bound or an instance without an adapter is an
// ErrFactory error.
func Start(ctx context.Context, factory Factory, opts ...Option) (*Session, error) {
	return StartWith(ctx, factory, NewFixture(), opts...)
}

// StartWith is Start with a caller-chosen fixture (the fixture's runtime and
// session ids should stay those of its messages).
func StartWith(ctx context.Context, factory Factory, fixture Fixture, opts ...Option) (*Session, error) {
	return start(ctx, factory, Setup{Fixture: fixture}, newOptions(opts))
}

// start creates an instance from factory with setup, and a new
// RecordingTransport as setup.Transport unless setup names one (then
// Session.Transport is nil).
func start(ctx context.Context, factory Factory, setup Setup, o *options) (s *Session, err error) {
	var transport *RecordingTransport
	if setup.Transport == nil {
		transport = NewRecordingTransport()
		setup.Transport = transport
	}
	setup.TB = o.tb
	// The factory gets a copy: an adapter that edits the history it was
	// given must not edit what the checks compare its snapshots with.
	fixture := setup.Fixture
	setup.Fixture = fixture.clone()
	// A Create that returns after its bound hands its instance to no one:
	// it is shut down and cleaned up where it returns (late), and inst is
	// only read under mu.
	var (
		mu   sync.Mutex
		inst Instance
		late bool
	)
	err = guard(func() error {
		cctx, cancel := boundedContext(ctx, o.CallTimeout)
		defer cancel()
		var cerr error
		defer func() {
			mu.Lock()
			late = true
			mu.Unlock()
		}()
		bounded("Factory.Create", o.CallTimeout, func() {
			got, gerr := factory.Create(cctx, setup)
			mu.Lock()
			if late {
				mu.Unlock()
				discardLate(got, o.CallTimeout)
				return
			}
			inst, cerr = got, gerr
			mu.Unlock()
		})
		return cerr
	})
	mu.Lock()
	created := inst
	mu.Unlock()
	if err != nil {
		var to *callTimeout
		var ae *adapterError
		switch {
		case errors.As(err, &to):
			err = fmt.Errorf("%w: %w", ErrFactory, err)
		case errors.As(err, &ae):
			err = fmt.Errorf("%w: Create panicked: %s", ErrFactory, scrub(ae.err.Error()))
		case !errors.Is(err, ErrFactory):
			err = &scrubbedError{prefix: ErrFactory, err: err}
		}
		return nil, errors.Join(err, runCleanup(ctx, created.Cleanup, o.CallTimeout))
	}
	if created.Adapter == nil {
		return nil, errors.Join(fmt.Errorf("%w: Create returned no adapter", ErrFactory), runCleanup(ctx, created.Cleanup, o.CallTimeout))
	}
	s = &Session{fixture: fixture, transport: transport, instance: created,
		adapter: &boundedAdapter{inner: created.Adapter, bound: o.CallTimeout}}
	s.hold(created.Held)
	return s, nil
}

// discardLate shuts down and cleans up an instance its factory returned
// after the call bound, in the goroutine that waited for it: no check uses
// it, and nothing it holds may outlive the run unnoticed.
func discardLate(inst Instance, bound time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	defer func() { _ = recover() }() // a late instance's panic fails no check: the timeout did
	if inst.Adapter != nil {
		_ = inst.Adapter.Shutdown(ctx)
	}
	if inst.Cleanup != nil {
		_ = inst.Cleanup(ctx)
	}
}

// Adapter returns the adapter under test; every call is bounded.
func (s *Session) Adapter() contract.Adapter { return s.adapter }

// Fixture returns a copy of the fixture the instance was created from,
// holding the history as the instance holds it (Instance.Held, when the
// factory reports one).
func (s *Session) Fixture() Fixture { return s.fixture.clone() }

// Transport returns the transport injected into the adapter.
func (s *Session) Transport() *RecordingTransport { return s.transport }

// ExpectedProjectRoot returns the project root the factory says the adapter
// must trust.
func (s *Session) ExpectedProjectRoot() string { return s.instance.ExpectedProjectRoot }

// Close shuts the adapter down (again) and then runs the instance's cleanup,
// which runs even when shutdown fails, panics or does not return in time. A
// shutdown failure is an ErrShutdown error, a cleanup failure an ErrCleanup
// error. Calling Close again does nothing.
func (s *Session) Close(ctx context.Context) error {
	if s.closed {
		return nil
	}
	s.closed = true
	errShutdown := guard(func() error { return s.adapter.Shutdown(ctx) })
	var to *callTimeout
	var ae *adapterError
	switch {
	case errShutdown == nil:
	case errors.As(errShutdown, &to):
		errShutdown = fmt.Errorf("%w: %w", ErrShutdown, to)
	case errors.As(errShutdown, &ae):
		errShutdown = fmt.Errorf("%w: Shutdown panicked: %s", ErrShutdown, scrub(ae.err.Error()))
	default:
		errShutdown = &scrubbedError{prefix: ErrShutdown, err: errShutdown}
	}
	return errors.Join(errShutdown, runCleanup(ctx, s.instance.Cleanup, s.adapter.bound))
}

func runCleanup(ctx context.Context, cleanup func(context.Context) error, bound time.Duration) error {
	if cleanup == nil {
		return nil
	}
	err := guard(func() error {
		cctx, cancel := boundedContext(ctx, bound)
		defer cancel()
		var cerr error
		bounded("Instance.Cleanup", bound, func() { cerr = cleanup(cctx) })
		return cerr
	})
	var to *callTimeout
	var ae *adapterError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &to):
		return fmt.Errorf("%w: %w", ErrCleanup, to)
	case errors.As(err, &ae):
		return fmt.Errorf("%w: cleanup panicked: %s", ErrCleanup, scrub(ae.err.Error()))
	}
	return &scrubbedError{prefix: ErrCleanup, err: err}
}

// scrubbedError wraps an error from a factory or adapter: errors.Is sees
// both the kit's sentinel and the original error, but its text is scrubbed
// of probes and cut short.
type scrubbedError struct {
	prefix error
	err    error
}

func (e *scrubbedError) Error() string   { return e.prefix.Error() + ": " + scrub(e.err.Error()) }
func (e *scrubbedError) Unwrap() []error { return []error{e.prefix, e.err} }

// runCases runs the seven contract cases in order on s.
func (s *Session) runCases(ctx context.Context) []caseResult {
	cs := contractCases()
	out := make([]caseResult, len(cs))
	for i, c := range cs {
		out[i] = c.runCase(ctx, s)
	}
	return out
}

// Run runs the seven conformance cases, in order, on one instance created by
// factory, then shuts the adapter down again and runs the instance's
// cleanup. It returns the metadata-only report. If the factory fails, or the
// final shutdown or the cleanup fails, Run returns that error (ErrFactory,
// ErrShutdown, ErrCleanup) and no report; the cleanup runs in every case.
// Every adapter call is bounded (see WithCallTimeout).
func Run(ctx context.Context, factory Factory, opts ...Option) (Report, error) {
	s, err := Start(ctx, factory, opts...)
	if err != nil {
		return Report{}, err
	}
	results := s.runCases(ctx)
	if err := s.Close(ctx); err != nil {
		return Report{}, err
	}
	return newReport(newOptions(opts).nameOf(factory), results), nil
}

// Verify is Run for callers that want explanations rather than a report: it
// returns nil when all seven cases pass, and otherwise an error joining each
// failed case's *Failure (rule, expected, actual) and any factory, shutdown
// or cleanup error. Like everything in this package, its text never holds a
// probe or a payload.
func Verify(ctx context.Context, factory Factory, opts ...Option) error {
	s, err := Start(ctx, factory, opts...)
	if err != nil {
		return err
	}
	var errs []error
	for _, r := range s.runCases(ctx) {
		if r.Failure != nil {
			errs = append(errs, r.Failure)
		}
	}
	errs = append(errs, s.Close(ctx))
	return errors.Join(errs...)
}

// startKV is start for the local KV checks: the factory also receives port
// as Setup.LocalKVPort.
func startKV(ctx context.Context, factory Factory, port localkv.RuntimePort, o *options) (*Session, error) {
	return start(ctx, factory, Setup{Fixture: NewFixture(), LocalKVPort: port}, o)
}
