package bridge

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
)

// newLeadScripted is newScripted over an os.Pipe, whose read deadlines let
// calls read their own responses.
func newLeadScripted(t *testing.T, opts Options) (*Client, *scripted) {
	t.Helper()
	c, s, _ := newWatchedLeadScripted(t, opts)
	return c, s
}

// watchedFile is an *os.File that reports every read that returned data,
// so a test can wait until the client has read what it was sent.
type watchedFile struct {
	*os.File
	reads chan int
}

func (f *watchedFile) Read(b []byte) (int, error) {
	n, err := f.File.Read(b)
	if n > 0 {
		select {
		case f.reads <- n:
		default:
		}
	}
	return n, err
}

// newWatchedLeadScripted is newLeadScripted, with a channel that receives
// the size of each read the client made (when the test is listening).
func newWatchedLeadScripted(t *testing.T, opts Options) (*Client, *scripted, <-chan int) {
	t.Helper()
	sr, cw := io.Pipe()
	r, sw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cr := &watchedFile{File: r, reads: make(chan int, 1)}
	c := NewClient(cr, cw, opts)
	if !c.p.lead {
		t.Fatal("calls over an os.Pipe do not read for themselves")
	}
	s := &scripted{t: t, in: bufio.NewReader(sr), w: sw}
	t.Cleanup(func() {
		sw.Close()
		sr.Close()
		c.Close()
	})
	return c, s, cr.reads
}

func TestLeaderTimesOut(t *testing.T) {
	checkGoroutines(t)
	const timeout = 200 * time.Millisecond
	c, s := newLeadScripted(t, Options{CallTimeout: timeout})
	go s.read() // and never answer
	start := time.Now()
	if _, err := c.Hello(context.Background()); !errors.Is(err, ErrTimeout) || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("hello: %v, want ErrTimeout", err)
	}
	if d := time.Since(start); d < timeout || d > timeout+bound(10*time.Second) {
		t.Fatalf("the call timed out after %s", d)
	}
	if !errors.Is(c.Err(), ErrTimeout) {
		t.Fatalf("connection error %v, want ErrTimeout", c.Err())
	}
}

// A call cancelled while it reads keeps the line it was reading, so the
// response it abandoned is dropped whole and the next call works.
func TestLeaderCancelKeepsAPartialLine(t *testing.T) {
	checkGoroutines(t)
	c, s, reads := newWatchedLeadScripted(t, Options{CallTimeout: bound(10 * time.Second)})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.Hello(ctx)
		errc <- err
	}()
	if first := s.read(); first.ID != 1 {
		t.Fatalf("first id %d", first.ID)
	}
	fragment := `{"id":1,"result":{"protocol":"runtime-adapter-`
	go func() { _, _ = io.WriteString(s.w, fragment) }()
	// The leader has read the fragment (a pipe hands over a write this
	// small whole): cancel the call in the middle of its line.
	if n := <-reads; n != len(fragment) {
		t.Fatalf("the leader read %d bytes, want the %d of the fragment", n, len(fragment))
	}
	cancel()
	if c := s.read(); c.Method != MethodCancel || string(c.Params) != `{"id":1}` {
		t.Fatalf("after the cancelled call: %s %s, want a cancel naming id 1", c.Method, c.Params)
	}
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled hello: %v", err)
	}
	s.write(`bridge-v1","factory":"late"}}`)
	go func() {
		env := s.read()
		s.write(`{"id":%d,"result":{"protocol":"runtime-adapter-bridge-v1","factory":"scripted"}}`, env.ID)
	}()
	name, err := c.Hello(context.Background())
	if err != nil || name != "scripted" {
		t.Fatalf("hello after an abandoned call: %q, %v", name, err)
	}
	if c.Err() != nil {
		t.Fatalf("the connection broke: %v", c.Err())
	}
}

// A call waiting for its response while another call leads gets it from
// the leader, and times out on its own when none comes.
func TestFollowerTimesOutWhileAnotherLeads(t *testing.T) {
	checkGoroutines(t)
	c, s := newLeadScripted(t, Options{CallTimeout: 300 * time.Millisecond})
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := c.Hello(context.Background())
			errs <- err
		}()
	}
	s.read()
	s.read()
	for range 2 {
		if err := <-errs; !errors.Is(err, ErrTimeout) {
			t.Fatalf("hello: %v, want ErrTimeout", err)
		}
	}
}

func TestConcurrentCallsWithCallbacks(t *testing.T) {
	serveOverOSPipes := func(t *testing.T, tr *conformance.RecordingTransport) conformance.Instance {
		cr, sw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		sr, cw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			done <- Serve(context.Background(), &fakeFactory{}, sr, sw)
			sw.Close()
		}()
		c := NewClient(cr, cw, Options{CallTimeout: bound(10 * time.Second)})
		_, inst, err := open(context.Background(), c, conformance.Setup{Fixture: conformance.NewFixture(), Transport: tr}, func() error {
			err := <-done
			sr.Close()
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return inst
	}
	for _, tc := range []struct {
		name   string
		create func(t *testing.T, tr *conformance.RecordingTransport) conformance.Instance
	}{
		{"process", func(t *testing.T, tr *conformance.RecordingTransport) conformance.Instance {
			inst, err := childFactory("serve-fake", Options{}).Create(context.Background(), conformance.Setup{Fixture: conformance.NewFixture(), Transport: tr})
			if err != nil {
				t.Fatal(err)
			}
			return inst
		}},
		{"os-pipes", serveOverOSPipes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkGoroutines(t)
			ctx := context.Background()
			tr := conformance.NewRecordingTransport()
			inst := tc.create(t, tr)
			const goroutines, calls = 8, 40
			var wg sync.WaitGroup
			errs := make(chan error, goroutines)
			for range goroutines {
				wg.Go(func() {
					for i := range calls {
						if i%2 == 0 {
							r := inst.Adapter.Complete(ctx, contract.CompletionRequest{Provider: "p", Model: "m", Payload: secretPayload()})
							if r.Status != contract.StatusCompleted {
								errs <- errors.New("a completion did not complete: " + string(r.Code))
								return
							}
						} else if _, err := inst.Adapter.TrustedProjectRoot(ctx); err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			if tr.Len() != goroutines*calls/2 {
				t.Errorf("%d transport calls, want %d", tr.Len(), goroutines*calls/2)
			}
			if err := inst.Cleanup(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}
