package bridge

import (
	"context"
	"errors"
	"io"

	"github.com/ds4context/adapterkit/contract/conformance"
)

// Pipe returns a factory that serves factory in process over a pair of
// pipes: each instance gets its own Server and Client, and every adapter
// call crosses the protocol exactly as it would to a child process. It is
// the bridge without the process, for tests and benchmarks of the protocol
// itself. Its Name is factory's.
func Pipe(factory conformance.Factory, opts Options) conformance.Factory {
	return &pipeFactory{inner: factory, opts: opts, held: newHeldBudget(opts.maxHeld())}
}

type pipeFactory struct {
	inner conformance.Factory
	opts  Options
	held  *heldBudget // bounds what all its clients hold at once
}

// Name implements conformance.Factory.
func (f *pipeFactory) Name() string { return f.inner.Name() }

// Create implements conformance.Factory.
func (f *pipeFactory) Create(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
	c, stop := f.connect()
	_, inst, err := open(ctx, c, setup, stop)
	return inst, err
}

// open says hello over c and creates one instance. The instance's cleanup
// (or a failure on the way) closes c and then runs release, which frees
// what carries the connection; it returns the adapter's hello name.
func open(ctx context.Context, c *Client, setup conformance.Setup, release func() error) (string, conformance.Instance, error) {
	fail := func(err error) (string, conformance.Instance, error) {
		return "", conformance.Instance{}, errors.Join(err, c.Close(), release())
	}
	name, err := c.Hello(ctx)
	if err != nil {
		return fail(err)
	}
	inst, err := c.Create(ctx, setup)
	if err != nil {
		return fail(err)
	}
	remoteCleanup := inst.Cleanup
	inst.Cleanup = func(ctx context.Context) error {
		err := remoteCleanup(ctx)
		if errors.Is(err, ErrUnavailable) {
			err = nil // the peer is already gone; the failure was reported where it happened
		}
		return errors.Join(err, c.Close(), release())
	}
	return name, inst, nil
}

// connect starts a Server on one end of two pipes and returns a Client on
// the other, and a stop that waits for the server and returns its error.
func (f *pipeFactory) connect() (*Client, func() error) {
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	srv := &Server{Factory: f.inner, MaxLineBytes: f.opts.MaxLineBytes, MaxHeldBytes: f.opts.MaxHeldBytes}
	done := make(chan error, 1)
	go func() {
		err := srv.Serve(context.Background(), toServer, fromServer)
		fromServer.Close()
		toServer.Close()
		done <- err
	}()
	closeAll := func() {
		fromClient.Close()
		toClient.Close()
	}
	c := newClient(toClient, fromClient, f.opts, f.held, func(error) { closeAll() }, func() error {
		fromClient.Close()
		return nil
	})
	var serverErr error
	stopped := false
	stop := func() error {
		if !stopped {
			stopped = true
			closeAll()
			serverErr = <-done
			if errors.Is(serverErr, io.ErrClosedPipe) {
				serverErr = nil
			}
		}
		return serverErr
	}
	return c, stop
}
