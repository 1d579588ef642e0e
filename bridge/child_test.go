package bridge

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ds4context/adapterkit/contract/conformance"
)

// childEnv selects what the test binary does when it is re-executed as an
// adapter process.
const childEnv = "BRIDGE_TEST_CHILD"

// churnEnv gives the churn mode's sleepers their duration.
const churnEnv = "BRIDGE_TEST_CHURN"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(runChild(mode))
	}
	os.Exit(m.Run())
}

// childFactory returns a factory that re-executes the test binary in mode.
// Without a call timeout in opts, calls get a generous one: a loaded
// machine must not make a working child time out.
func childFactory(mode string, opts Options, extraEnv ...string) *execFactory {
	if opts.CallTimeout == 0 {
		opts.CallTimeout = bound(10 * time.Second)
	}
	// GORACE: a race-enabled child would otherwise sleep a second at exit.
	env := append(os.Environ(), childEnv+"="+mode, "GORACE=atexit_sleep_ms=0")
	env = append(env, extraEnv...)
	return NewFactory(ExecConfig{
		Path: os.Args[0],
		Args: []string{"-test.run=^$"},
		Env:  env,
		// A cooperative child exits at the end of its input; one that does
		// not is killed, which some tests must not mistake for that.
		ExitGrace: bound(10 * time.Second),
		Options:   opts,
	}).(*execFactory)
}

// childServers holds the factories other test files serve in a child, by
// mode.
var childServers = map[string]func() conformance.Factory{}

// runChild is the adapter process of the child tests. "serve-fake" serves
// the fake factory; the other modes answer hello and create, then misbehave
// on the first call after them.
func runChild(mode string) int {
	if serve := childServers[mode]; serve != nil {
		if err := Serve(context.Background(), serve(), os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	}
	if mode == "forker" {
		// The middle of a double fork: start a sleeper in a session of
		// its own, say its id and exit, so that it is orphaned.
		sleeper := exec.Command("sleep", "3600")
		sleeper.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := sleeper.Start(); err != nil {
			return 6
		}
		fmt.Println(sleeper.Process.Pid)
		return 0
	}
	if mode == "serve-fake" || mode == "serve-fake-exit-1" {
		if err := Serve(context.Background(), &fakeFactory{}, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if mode == "serve-fake-exit-1" {
			return 1
		}
		return 0
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	reply := func(id uint64, result string) {
		fmt.Fprintf(out, `{"id":%d,"result":%s}`+"\n", id, result)
		out.Flush()
	}
	for in.Scan() {
		var env envelope
		if err := json.Unmarshal(in.Bytes(), &env); err != nil {
			return 2
		}
		switch env.Method {
		case MethodHello:
			if mode == "old-version" {
				fmt.Fprintf(out, `{"id":%d,"error":{"code":"unsupported-version","message":"speaks v0 only"}}`+"\n", env.ID)
				out.Flush()
				continue
			}
			reply(env.ID, `{"protocol":"runtime-adapter-bridge-v1","factory":"scripted"}`)
			continue
		case MethodCreate:
			if mode == "exit-on-create" {
				return 0
			}
			reply(env.ID, `{"instance":"only","expectedProjectRoot":"/scripted"}`)
			continue
		case MethodCleanup:
			reply(env.ID, "null")
			continue
		}
		if mode == "churn" && env.Method == MethodTrustedProjectRoot {
			// A descendant that never stops forking: a shell starting
			// sleepers, marked by their duration, as fast as it can.
			// It runs in a session of its own, out of reach of a kill of
			// the adapter's process group.
			// It says so once its first sleeper runs.
			churn := exec.Command("/bin/sh", "-c", `sleep "$0" & echo; while :; do sleep "$0" & done`, os.Getenv(churnEnv))
			churn.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			started, err := churn.StdoutPipe()
			if err == nil {
				err = churn.Start()
			}
			if err == nil {
				_, err = bufio.NewReader(started).ReadString('\n')
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 7
			}
			reply(env.ID, strconv.Quote(strconv.Itoa(churn.Process.Pid)))
			continue
		}
		if spawned := strings.TrimPrefix(mode, "spawn-"); spawned != mode && env.Method == MethodTrustedProjectRoot {
			// Start descendants that try to outlive the process: one in its
			// process group, one in a session of its own, and one forked
			// twice (its parent exits, so it is orphaned); answer with
			// their ids; then misbehave as the rest of the mode says.
			pids, err := spawnDescendants()
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 7
			}
			reply(env.ID, strconv.Quote(pids))
			mode = spawned
			continue
		}
		switch mode {
		case "cooperate":
			reply(env.ID, "null")
			return 3
		case "hang":
			time.Sleep(time.Hour)
		case "deaf":
			// Answer one call, then never read again.
			reply(env.ID, `"/scripted"`)
			time.Sleep(time.Hour)
		case "flood":
			// Transport requests as fast as the pipe takes them, and never
			// a read of the responses.
			for i := uint64(1); ; i++ {
				fmt.Fprintf(out, `{"id":%d,"method":"transport","params":{"instance":"only","request":{"provider":"p","model":"m","destination":"remote","payload":{}}}}`+"\n", i)
				if i%64 == 0 && out.Flush() != nil {
					return 0
				}
			}
		case "garbage":
			// Echo the request's params, payload text and all, in a line
			// that is not JSON.
			fmt.Fprintf(out, "garbage %s\n", env.Params)
			out.Flush()
		case "wrong-id":
			reply(env.ID+1000, "null")
		case "huge":
			out.WriteString(strings.Repeat(secretText, (3<<20)/len(secretText)))
			out.Flush()
			time.Sleep(time.Hour)
		case "unterminated":
			out.WriteString(`{"id":` + strconv.FormatUint(env.ID, 10))
			out.Flush()
			return 0
		case "stdout-closed":
			os.Stdout.Close()
			time.Sleep(time.Hour)
		default:
			return 5
		}
	}
	return 0
}

// spawnDescendants starts the descendants of the spawn-… modes and returns
// their ids, separated by commas.
func spawnDescendants() (string, error) {
	inGroup := exec.Command("sleep", "3600")
	ownSession := exec.Command("sleep", "3600")
	ownSession.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var pids []string
	for _, c := range []*exec.Cmd{inGroup, ownSession} {
		if err := c.Start(); err != nil {
			return "", err
		}
		pids = append(pids, strconv.Itoa(c.Process.Pid))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	forker := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	forker.Env = append(os.Environ(), childEnv+"=forker")
	out, err := forker.Output()
	if err != nil {
		return "", err
	}
	return strings.Join(append(pids, strings.TrimSpace(string(out))), ","), nil
}
