package conformance

import (
	"context"
	"errors"
	"fmt"

	"github.com/ds4context/adapterkit/contract"
)

// Session is one adapter instance under test: created by a factory from a
// fixture and a fresh RecordingTransport, ready to run cases on. Run uses a
// single Session for all seven cases; the Ginkgo suite in package spec
// starts a fresh Session for each case. A Session is not safe for concurrent
// use, but its Adapter is.
type Session struct {
	fixture   Fixture
	transport *RecordingTransport
	instance  Instance
	baseline  *contract.HistorySnapshot
	closed    bool
}

// Start creates an instance from factory with the conformance fixture
// (NewFixture) and a new RecordingTransport. A factory error, a panic in
// Create or an instance without an adapter is an ErrFactory error.
func Start(ctx context.Context, factory Factory) (*Session, error) {
	return StartWith(ctx, factory, NewFixture())
}

// StartWith is Start with a caller-chosen fixture, for checks that hand the
// factory other histories (the fixture's runtime and session ids should stay
// those of the messages).
func StartWith(ctx context.Context, factory Factory, fixture Fixture) (*Session, error) {
	return start(ctx, factory, Setup{Fixture: fixture})
}

// start creates an instance from factory with setup and a new
// RecordingTransport as setup.Transport.
func start(ctx context.Context, factory Factory, setup Setup) (s *Session, err error) {
	fixture := setup.Fixture
	transport := NewRecordingTransport()
	setup.Transport = transport
	var inst Instance
	func() {
		defer func() {
			if v := recover(); v != nil {
				err = fmt.Errorf("%w: Create panicked: %s", ErrFactory, scrub(fmt.Sprint(v)))
			}
		}()
		inst, err = factory.Create(ctx, setup)
	}()
	if err != nil {
		if !errors.Is(err, ErrFactory) {
			err = &scrubbedError{prefix: ErrFactory, err: err}
		}
		return nil, errors.Join(err, runCleanup(ctx, inst.Cleanup))
	}
	if inst.Adapter == nil {
		return nil, errors.Join(fmt.Errorf("%w: Create returned no adapter", ErrFactory), runCleanup(ctx, inst.Cleanup))
	}
	return &Session{fixture: fixture, transport: transport, instance: inst}, nil
}

// Adapter returns the adapter under test.
func (s *Session) Adapter() contract.Adapter { return s.instance.Adapter }

// Fixture returns the fixture the instance was created from.
func (s *Session) Fixture() Fixture { return s.fixture }

// Transport returns the transport injected into the adapter.
func (s *Session) Transport() *RecordingTransport { return s.transport }

// ExpectedProjectRoot returns the project root the factory says the adapter
// must trust.
func (s *Session) ExpectedProjectRoot() string { return s.instance.ExpectedProjectRoot }

// RunCase runs the case with the given id (one of CaseIDs) and returns its
// result. A case that finds the adapter breaking a rule fails with
// "<id>-assertion-failed"; one where an adapter method errs unexpectedly or
// panics fails with "<id>-threw". An unknown id is a threw result too.
func (s *Session) RunCase(ctx context.Context, id string) CaseResult {
	for _, c := range cases {
		if c.ID == id {
			return c.run(ctx, s)
		}
	}
	return CaseResult{ID: scrub(id), FailureCode: scrub(id) + codeThrew, Failure: &Failure{
		Case: scrub(id), Code: scrub(id) + codeThrew, Rule: "the case id must be one of " + fmt.Sprint(CaseIDs()),
		Expected: "a known case id", Actual: fmt.Sprintf("%q", scrub(id)),
	}}
}

// RunAll runs the seven cases in order and returns their results.
func (s *Session) RunAll(ctx context.Context) []CaseResult {
	out := make([]CaseResult, len(cases))
	for i, c := range cases {
		out[i] = c.run(ctx, s)
	}
	return out
}

// Close shuts the adapter down (again) and then runs the instance's cleanup,
// which runs even when shutdown fails or panics. A shutdown failure is an
// ErrShutdown error, a cleanup failure an ErrCleanup error. Calling Close
// again does nothing.
func (s *Session) Close(ctx context.Context) error {
	if s.closed {
		return nil
	}
	s.closed = true
	var errShutdown error
	func() {
		defer func() {
			if v := recover(); v != nil {
				errShutdown = fmt.Errorf("%w: Shutdown panicked: %s", ErrShutdown, scrub(fmt.Sprint(v)))
			}
		}()
		if err := s.instance.Adapter.Shutdown(ctx); err != nil {
			errShutdown = &scrubbedError{prefix: ErrShutdown, err: err}
		}
	}()
	return errors.Join(errShutdown, runCleanup(ctx, s.instance.Cleanup))
}

func runCleanup(ctx context.Context, cleanup func(context.Context) error) (err error) {
	if cleanup == nil {
		return nil
	}
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%w: cleanup panicked: %s", ErrCleanup, scrub(fmt.Sprint(v)))
		}
	}()
	if err := cleanup(ctx); err != nil {
		return &scrubbedError{prefix: ErrCleanup, err: err}
	}
	return nil
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

// Run runs the seven conformance cases, in order, on one instance created by
// factory, then shuts the adapter down again and runs the instance's
// cleanup. It returns the metadata-only report. If the factory fails, or the
// final shutdown or the cleanup fails, Run returns that error (ErrFactory,
// ErrShutdown, ErrCleanup) and no report; the cleanup runs in every case.
func Run(ctx context.Context, factory Factory) (Report, error) {
	s, err := Start(ctx, factory)
	if err != nil {
		return Report{}, err
	}
	results := s.RunAll(ctx)
	if err := s.Close(ctx); err != nil {
		return Report{}, err
	}
	return NewReport(factory.Name(), results), nil
}

// Verify is Run for callers that want explanations rather than a report: it
// returns nil when all seven cases pass, and otherwise an error joining each
// failed case's *Failure (rule, expected, actual) and any factory, shutdown
// or cleanup error. Like everything in this package, its text never holds a
// probe or a payload.
func Verify(ctx context.Context, factory Factory) error {
	s, err := Start(ctx, factory)
	if err != nil {
		return err
	}
	var errs []error
	for _, r := range s.RunAll(ctx) {
		if r.Failure != nil {
			errs = append(errs, r.Failure)
		}
	}
	errs = append(errs, s.Close(ctx))
	return errors.Join(errs...)
}
