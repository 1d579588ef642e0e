package bridge

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ds4context/adapterkit/contract/conformance"
)

// DefaultExitGrace is how long a child may take to exit after its input
// closes when ExecConfig.ExitGrace is zero.
const DefaultExitGrace = time.Second

// ExecConfig describes an adapter process.
type ExecConfig struct {
	// Name names the factory in reports. When empty, the factory reports
	// the name the process gave in its hello once one instance was created,
	// and the executable's base name before that.
	Name string
	// Path and Args are the executable and its arguments (Args excludes the
	// program name). Path is looked up in PATH when it has no separator.
	Path string
	Args []string
	// Dir is the child's working directory; empty means the current one.
	Dir string
	// Env is the child's environment; nil means the harness's own.
	Env []string
	// Stderr receives the child's standard error; nil discards it. The
	// processes a factory starts may run at once: writes to a Stderr that
	// is not an *os.File are serialised, so it need not be safe for
	// concurrent use.
	Stderr io.Writer
	// ExitGrace is how long the child may take to exit after its input
	// closes before it is killed. Zero means
	// DefaultExitGrace.
	ExitGrace time.Duration
	// Options tune the connections (call timeout, line bound, and the
	// bound on what all the factory's connections hold at once).
	Options
}

// Command returns a factory that runs the named program with args, one
// process per instance, with the default options.
func Command(name string, args ...string) conformance.Factory {
	return NewFactory(ExecConfig{Path: name, Args: args})
}

// NewFactory returns a factory that starts one process per instance, as cfg
// describes, negotiates the protocol and creates the instance in it. The
// instance's cleanup asks the process to clean up, closes its input, and
// kills the process if it has not exited within the grace period; then it
// ends every process the child started (on Linux all of them, even those
// that left its process group; on other Unix systems its process group),
// and returns once they are reaped. A call that times out, a crash, a
// flood of requests or a protocol violation kills them at once.
// docs/bridge.md says exactly which descendants are ended on which system.
func NewFactory(cfg ExecConfig) conformance.Factory {
	if _, isFile := cfg.Stderr.(*os.File); cfg.Stderr != nil && !isFile {
		cfg.Stderr = &lockedWriter{w: cfg.Stderr}
	}
	return &execFactory{cfg: cfg, held: newHeldBudget(cfg.maxHeld())}
}

// lockedWriter serialises writes to w: exec copies each process's standard
// error to a non-file writer in a goroutine of its own.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

type execFactory struct {
	cfg     ExecConfig
	held    *heldBudget    // bounds what all its processes' connections hold at once
	onStart func(*process) // tests observe the processes started

	mu    sync.Mutex
	hello string
}

// Name implements conformance.Factory.
func (f *execFactory) Name() string {
	if f.cfg.Name != "" {
		return f.cfg.Name
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.hello != "" {
		return f.hello
	}
	return filepath.Base(f.cfg.Path)
}

// Create implements conformance.Factory.
func (f *execFactory) Create(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
	proc, err := startProcess(f.cfg)
	if err != nil {
		return conformance.Instance{}, err
	}
	if f.onStart != nil {
		f.onStart(proc)
	}
	c := newClient(proc.stdout, proc.stdin, f.cfg.Options, f.held, proc.kill, proc.stop)
	proc.readDone = c.p.done
	name, inst, err := open(ctx, c, setup, func() error { return nil })
	if err != nil {
		return inst, err
	}
	f.mu.Lock()
	f.hello = name
	f.mu.Unlock()
	return inst, nil
}

// markEnv names the environment variable the harness sets in every adapter
// process it starts, with a value unique to that process. Descendants
// inherit it; on Linux the harness recognises by it, among the orphans it
// adopted, those an adapter process left behind.
const markEnv = "ADAPTERKIT_BRIDGE_PROCESS"

// process is one child: its pipes, and an idempotent kill and reap of it
// and of every process it started.
type process struct {
	cmd      *exec.Cmd
	stdin    *os.File
	stdout   *os.File
	grace    time.Duration
	mark     []byte          // markEnv=VALUE, as the child's environment holds it
	readDone <-chan struct{} // closed when the client's read loop ends

	mu       sync.Mutex
	reaping  bool
	killed   bool
	found    map[int]bool // descendants killed (or found dead), to reap
	waitErr  error
	descErr  error // descendants left after the reap
	waitDone chan struct{}
	stopOnce sync.Once
	stopErr  error
}

// newMark returns a markEnv entry unique to one adapter process.
func newMark() []byte {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return []byte(markEnv + "=" + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b))
}

// markedEnv returns env (the harness's own when nil) with mark set.
func markedEnv(env []string, mark []byte) []string {
	if env == nil {
		env = os.Environ()
	}
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, markEnv+"=") {
			out = append(out, kv)
		}
	}
	return append(out, string(mark))
}

func startProcess(cfg ExecConfig) (*process, error) {
	if cfg.Path == "" {
		return nil, errors.New("bridge: no adapter command")
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	mark := newMark()
	cmd := exec.Command(cfg.Path, cfg.Args...)
	cmd.Dir, cmd.Env = cfg.Dir, markedEnv(cfg.Env, mark)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, cfg.Stderr
	grace := cfg.ExitGrace
	if grace <= 0 {
		grace = DefaultExitGrace
	}
	// Only a non-file Stderr makes exec copy output in a goroutine;
	// WaitDelay bounds how long Wait waits for that copy.
	cmd.WaitDelay = grace
	setProcessGroup(cmd)
	acquireSubreaper()
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		releaseSubreaper()
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("bridge: starting the adapter process: %w", err)
	}
	return &process{cmd: cmd, stdin: inW, stdout: outR, grace: grace, mark: mark, found: make(map[int]bool), waitDone: make(chan struct{})}, nil
}

// killGroup kills the child, its process group and, on Linux, every
// process descended from it, unless the leader is being reaped. The leader
// is reaped only after this, so its id (the group's id) cannot have been
// reused by another process. The leader is stopped first, so that it
// forks nothing while its descendants are found; then it and its group are
// killed, and the descendants looked for once more.
func (p *process) killGroup() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reaping {
		return
	}
	p.killed = true
	pid := p.cmd.Process.Pid
	stopProcess(p.cmd)
	killDescendants(pid, p.mark, p.found)
	killProcessGroup(p.cmd)
	killDescendants(pid, p.mark, p.found)
}

// kill is the connection's break hook: the child misbehaved (or exited), so
// its group is killed and reaped at once. A deliberate close is left to stop.
func (p *process) kill(cause error) {
	if errors.Is(cause, errClientClosed) {
		return
	}
	p.killGroup()
	p.stdin.Close()
	go p.reap()
}

// reap waits for the child once, then for the descendants killGroup
// killed; later calls wait for the first. The child's exit status is its
// result: a descendant that could not be reaped is reported by stop.
func (p *process) reap() error {
	p.mu.Lock()
	if p.reaping {
		p.mu.Unlock()
		<-p.waitDone
		return p.waitErr
	}
	p.reaping = true
	p.mu.Unlock()
	err := p.cmd.Wait()
	p.descErr = reapDescendants(p.found)
	releaseSubreaper()
	p.waitErr = err
	close(p.waitDone)
	return err
}

// stop ends the child: it closes the child's input and waits, for the grace
// period, for the child's output to end; then it kills whatever is left of
// the child and what it started, reaps them and closes the output. A child
// that exits with a non-zero status on its own is an error, and so is a
// descendant that could not be reaped.
func (p *process) stop() error {
	p.stopOnce.Do(func() {
		p.stdin.Close()
		t := time.NewTimer(p.grace)
		select {
		case <-p.readDone:
			t.Stop()
		case <-t.C:
		}
		p.mu.Lock()
		wasKilled := p.killed
		p.mu.Unlock()
		p.killGroup()
		err := p.reap()
		p.stdout.Close()
		var ee *exec.ExitError
		if !wasKilled && errors.As(err, &ee) && ee.Exited() && ee.ExitCode() != 0 {
			p.stopErr = fmt.Errorf("%w with status %d", ErrExited, ee.ExitCode())
		}
		p.stopErr = errors.Join(p.stopErr, p.descErr)
	})
	return p.stopErr
}
