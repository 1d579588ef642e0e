package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
)

// gatedString decodes a JSON string once its gate opens, and says when
// its decoding began: a caller that holds its answer for as long as the
// test wants, as the decoding of a large snapshot does.
type gatedString struct {
	began chan<- struct{}
	gate  <-chan struct{}
	s     string
}

func (g *gatedString) UnmarshalJSON(b []byte) error {
	g.began <- struct{}{}
	<-g.gate
	return json.Unmarshal(b, &g.s)
}

// answerLine writes the answer to request id, a JSON string of body's
// bytes, as one line, without copying body.
func answerLine(w io.Writer, id uint64, body []byte) error {
	for _, b := range [][]byte{fmt.Appendf(nil, `{"id":%d,"result":"`, id), body, []byte("\"}\n")} {
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// heldCalls makes n concurrent calls on c whose answers, each a string of
// body's bytes, the script writes once it has read every request. Every
// call holds its answer until gate opens. It returns, once every call has
// begun decoding or failed, the calls' errors (nil for those decoding) and
// a function that opens the gate and returns what the decoding calls got.
func heldCalls(t *testing.T, c *Client, s *scripted, n int, body []byte) ([]error, func() []string) {
	t.Helper()
	ctx := context.Background()
	began := make(chan struct{}, n)
	gate := make(chan struct{})
	type result struct {
		i   int
		got string
		err error
	}
	results := make(chan result, n)
	for i := range n {
		go func() {
			g := &gatedString{began: began, gate: gate}
			err := c.p.call(ctx, c.timeout, MethodTrustedProjectRoot, instanceParams{Instance: "only"}, g)
			results <- result{i, g.s, err}
		}()
	}
	var ids []uint64
	for range n {
		ids = append(ids, s.read().ID)
	}
	for _, id := range ids {
		if err := answerLine(s.w, id, body); err != nil {
			t.Fatal(err)
		}
	}
	errs := make([]error, n)
	var done []result
	timeout := time.After(bound(30 * time.Second))
	for decoding := 0; decoding+len(done) < n; {
		select {
		case <-began:
			decoding++
		case r := <-results:
			if r.err == nil {
				t.Fatalf("call %d returned before its gate opened", r.i)
			}
			errs[r.i] = r.err
			done = append(done, r)
		case <-timeout:
			t.Fatalf("%d calls decoding and %d failed after %s, of %d", decoding, len(done), bound(30*time.Second), n)
		}
	}
	return errs, func() []string {
		close(gate)
		var got []string
		for range n - len(done) {
			select {
			case r := <-results:
				if r.err != nil {
					t.Errorf("call %d: %v", r.i, r.err)
				}
				got = append(got, r.got)
			case <-time.After(bound(30 * time.Second)):
				t.Fatal("a call did not return once its gate opened")
			}
		}
		return got
	}
}

// An answer that does not fit beside the answers held fails its call, with
// an error naming the bound; the connection goes on, and the bytes of the
// answers are given back once their calls have decoded them. So whether
// the client reads in a loop or its calls read for themselves.
func TestAnswerOverTheHeldBoundFailsItsCall(t *testing.T) {
	opts := Options{CallTimeout: bound(30 * time.Second), MaxLineBytes: 2 << 20, MaxHeldBytes: 3 << 20}
	body := bytes.Repeat([]byte("a"), 1200<<10) // two such answers fit, three do not
	for _, tc := range []struct {
		name string
		open func(*testing.T, Options) (*Client, *scripted)
	}{
		{"read loop", newScriptedWith},
		{"calls read", newLeadScripted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkGoroutines(t)
			c, s := tc.open(t, opts)
			errs, open := heldCalls(t, c, s, 3, body)
			var failed []error
			for _, err := range errs {
				if err != nil {
					failed = append(failed, err)
				}
			}
			if len(failed) != 1 {
				t.Fatalf("%d calls failed (%v), want the one whose answer passed the bound", len(failed), failed)
			}
			err := failed[0]
			want := fmt.Sprintf("bridge: trustedProjectRoot: bridge: messages held at once exceed the size bound: an answer of %d bytes beside the %d bytes held would pass the bound of %d bytes (MaxHeldBytes)",
				len(body)+len(`{"id":3,"result":""}`), 2*(len(body)+len(`{"id":1,"result":""}`)), opts.MaxHeldBytes)
			if !errors.Is(err, ErrHeldTooLarge) || errors.Is(err, ErrUnavailable) || err.Error() != want {
				t.Errorf("the call over the bound: %v\nwant %s, matching ErrHeldTooLarge and not ErrUnavailable", err, want)
			}
			for _, got := range open() {
				if len(got) != len(body) {
					t.Errorf("a held answer decoded to %d bytes, want %d", len(got), len(body))
				}
			}
			// The bytes are given back: two answers fit again, and the
			// connection never broke.
			errs, open = heldCalls(t, c, s, 2, body)
			if errors.Join(errs...) != nil {
				t.Errorf("after the held answers were decoded: %v", errs)
			}
			open()
			if err := c.Err(); err != nil {
				t.Errorf("the connection broke: %v", err)
			}
			if held, _ := c.p.held.take(0); held != 0 {
				t.Errorf("%d bytes still held once every call returned", held)
			}
		})
	}
}

// However many large valid answers a hostile adapter sends at once, what
// the client holds stays within the bound: the live heap, measured when
// every answer that got through is held by its call, grows by at most the
// bound and two lines (the line being read and its slack), where holding
// all of them would take several times that. By default the answers are
// of 2 MiB (the bound 8 MiB, all of them 32 MiB); ADAPTERKIT_STRESS=1
// sends answers of 4 MiB, all sizes doubled.
func TestHeldBoundCapsThePeakHeap(t *testing.T) {
	scale := 1
	if os.Getenv("ADAPTERKIT_STRESS") == "1" {
		scale = 2
	}
	const calls = 16
	var (
		answer   = scale * 2 << 20
		maxLine  = scale * 4 << 20
		maxHeld  = scale * 8 << 20
		allowed  = int64(maxHeld + 2*maxLine)
		withheld = calls * answer
	)
	c, s := newScriptedWith(t, Options{CallTimeout: bound(60 * time.Second), MaxLineBytes: maxLine, MaxHeldBytes: maxHeld})
	body := bytes.Repeat([]byte("b"), answer)
	liveHeap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := liveHeap()
	errs, open := heldCalls(t, c, s, calls, body)
	peak := liveHeap()
	grown := int64(peak) - int64(before)
	refused := 0
	for _, err := range errs {
		if err != nil {
			refused++
			if !errors.Is(err, ErrHeldTooLarge) {
				t.Errorf("a call failed with %v, want ErrHeldTooLarge", err)
			}
		}
	}
	got := open()
	t.Logf("%d answers of %d MiB at once: %d held, %d refused; live heap grew %.1f MiB while they were held (bound %d MiB, all of them %d MiB)",
		calls, answer>>20, len(got), refused, float64(grown)/(1<<20), maxHeld>>20, withheld>>20)
	if grown > allowed {
		t.Errorf("the live heap grew %d bytes while the answers were held, want at most %d (the bound and two lines)", grown, allowed)
	}
	if len(got) != maxHeld/(answer+64) || refused != calls-len(got) {
		t.Errorf("%d answers held and %d refused, want %d held (as many as the bound takes) and the rest refused", len(got), refused, maxHeld/(answer+64))
	}
}

// A hostile adapter process answering large valid snapshots: a snapshot
// larger than the bound fails its call, saying so, while the process goes
// on answering; concurrent snapshots each come back whole or refused. By
// default the snapshot holds 384 KiB of text (the bound 256 KiB, then
// room for two); ADAPTERKIT_STRESS=1 sends 1.5 MiB, all sizes four times.
func TestExecAnswersOverTheHeldBound(t *testing.T) {
	checkGoroutines(t)
	ctx := context.Background()
	scale := 1
	if os.Getenv("ADAPTERKIT_STRESS") == "1" {
		scale = 4
	}
	fx := conformance.NewFixture()
	fx.Messages[0].Blocks = []contract.Block{&contract.TextBlock{Text: strings.Repeat("history ", scale*(384<<10)/8)}}
	maxHeld := scale * 256 << 10
	f := childFactory("serve-fake", Options{MaxLineBytes: scale * 1 << 20, MaxHeldBytes: maxHeld})
	inst, err := f.Create(ctx, conformance.Setup{Fixture: fx, Transport: conformance.NewRecordingTransport()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = inst.Adapter.SnapshotHistory(ctx)
	if !errors.Is(err, ErrHeldTooLarge) || errors.Is(err, ErrUnavailable) ||
		!strings.HasPrefix(err.Error(), "bridge: snapshotHistory: ") || !strings.Contains(err.Error(), fmt.Sprintf("would pass the bound of %d bytes (MaxHeldBytes)", maxHeld)) {
		t.Errorf("a snapshot larger than the bound: %v, want ErrHeldTooLarge naming the bound", err)
	}
	if id := inst.Adapter.Identity(); id.AdapterName != "fake" {
		t.Errorf("after a refused answer: identity %+v, want the adapter's", id)
	}
	if err := inst.Cleanup(ctx); err != nil {
		t.Fatal(err)
	}

	// Room for two snapshots at once: eight asked at once each come back
	// whole or refused, and the process is never stopped.
	f = childFactory("serve-fake", Options{MaxLineBytes: scale * 1 << 20, MaxHeldBytes: scale * 1 << 20})
	inst, err = f.Create(ctx, conformance.Setup{Fixture: fx, Transport: conformance.NewRecordingTransport()})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			snap, err := inst.Adapter.SnapshotHistory(ctx)
			if err == nil && (len(snap.Messages) != len(fx.Messages) || snap.Messages[0].Blocks[0].(*contract.TextBlock).Text != fx.Messages[0].Blocks[0].(*contract.TextBlock).Text) {
				err = errors.New("the snapshot is not the fixture")
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil && !errors.Is(err, ErrHeldTooLarge) {
			t.Errorf("a concurrent snapshot: %v", err)
		}
	}
	for _, d := range inst.Adapter.Diagnostics() {
		if d.Code == DiagnosticProcessFailed {
			t.Errorf("the process was stopped: %+v", d)
		}
	}
	if err := inst.Cleanup(ctx); err != nil {
		t.Fatal(err)
	}
}

// A method without an error result whose answer was refused does not
// stand in an answer of its own: the adapter answered, so it panics with
// the error, as for an answer of the wrong shape.
func TestAnsweredPanicsOnARefusedAnswer(t *testing.T) {
	err := fmt.Errorf("bridge: identity: %w", ErrHeldTooLarge)
	defer func() {
		if v := recover(); v != err {
			t.Errorf("answered recovered %v, want a panic with %v", v, err)
		}
	}()
	answered(err)
}

// A line that nests JSON deeper than the decoder goes is named for it,
// with the depth it reaches, on both sides of the protocol; a line that
// is not JSON before it gets deep is not.
func TestDeepNestingIsNamed(t *testing.T) {
	deep := func(prefix string, n int, suffix string) []byte {
		return slices.Concat([]byte(prefix), bytes.Repeat([]byte("["), n), bytes.Repeat([]byte("]"), n), []byte(suffix))
	}
	for _, tc := range []struct {
		name string
		line []byte
		want string
	}{
		{"ten million deep", deep("", 10_000_000, ""), "a line nests JSON 10000000 levels deep, beyond the 10000 levels a protocol message may nest"},
		{"a result one level too deep", deep(`{"id":1,"result":`, 10000, "}"), "a line nests JSON 10001 levels deep, beyond the 10000 levels a protocol message may nest"},
		{"not JSON before it is deep", deep("x", 20000, ""), "a line is not a JSON protocol message"},
		{"deep in a string", []byte(`{"id":1,"result":"` + strings.Repeat("[", 20000) + `"}`), "the result does not have the method's shape"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, s := newScripted(t)
			done := make(chan error, 1)
			go func() {
				_, err := c.Hello(context.Background())
				done <- err
			}()
			s.read()
			if _, err := s.w.Write(append(tc.line, '\n')); err != nil {
				t.Fatal(err)
			}
			err := <-done
			if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("hello answered with the line: %v, want ErrProtocol saying %q", err, tc.want)
			}
		})
	}
	// The server names it too.
	in := io.MultiReader(bytes.NewReader(deep(`{"id":1,"method":"hello","params":`, 50000, "}")), strings.NewReader("\n"))
	err := Serve(context.Background(), &fakeFactory{}, in, io.Discard)
	if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), "a line nests JSON 50001 levels deep") {
		t.Errorf("Serve of a deep request: %v, want ErrProtocol naming the nesting", err)
	}
}

// A request that does not fit beside what is held breaks the connection,
// naming the bound: on the harness side (an adapter's callback) and on the
// server side (a harness request).
func TestRequestOverTheHeldBoundBreaksTheConnection(t *testing.T) {
	c, s := newScriptedWith(t, Options{CallTimeout: bound(30 * time.Second), MaxHeldBytes: 1 << 10})
	done := make(chan error, 1)
	go func() {
		_, err := c.Hello(context.Background())
		done <- err
	}()
	s.read()
	s.write(`{"id":1,"method":"transport","params":{"instance":"only","call":1,"request":{"payload":%q}}}`, strings.Repeat("p", 2<<10))
	err := <-done
	if !errors.Is(err, ErrUnavailable) || !errors.Is(err, ErrHeldTooLarge) || !strings.Contains(err.Error(), "a request of ") ||
		!strings.Contains(err.Error(), "would pass the bound of 1024 bytes (MaxHeldBytes); the peer sends more at once than this side holds") {
		t.Errorf("a callback over the bound: %v, want the connection broken naming the bound", err)
	}

	in := strings.NewReader(fmt.Sprintf(`{"id":1,"method":"hello","params":{"protocol":%q,"padding":%q}}`+"\n", ProtocolVersion, strings.Repeat("p", 2<<10)))
	err = (&Server{Factory: &fakeFactory{}, MaxHeldBytes: 1 << 10}).Serve(context.Background(), in, io.Discard)
	if !errors.Is(err, ErrHeldTooLarge) || !strings.Contains(err.Error(), "bound of 1024 bytes") {
		t.Errorf("Serve of a request over the bound: %v, want ErrHeldTooLarge naming the bound", err)
	}
}
