package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// conform --exec ends every process an adapter starts: here each adapter
// process leaves a sleeper in a session of its own and a second one forked
// twice (its parent shell exits at once), and none may be running once the
// command has returned.
func TestConformExecLeavesNoDescendants(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only Linux lets the harness find descendants that left the process group")
	}
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	t.Setenv(asCommandEnv, "1") // the adapter command is this binary too
	// A duration no other process uses marks the sleepers.
	marker := fmt.Sprintf("%d.%09d", 100000+os.Getpid(), time.Now().Nanosecond())
	script := `setsid sleep ` + marker + ` >/dev/null 2>&1 & (setsid sleep ` + marker + ` >/dev/null 2>&1 &); exec "$0" serve-reference`
	code, out, errOut := runCLI(t, "conform", "--extended=false", "--histories", "0", "--exec",
		"/bin/sh -c "+shellQuote(script)+" "+shellQuote(os.Args[0]))
	if code != exitPass {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if left := sleepers(marker); len(left) > 0 {
		for _, pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL) // leave nothing behind
		}
		t.Fatalf("%d processes the adapters started outlived the command: %v", len(left), left)
	}
}

// sleepers returns the running processes whose command line is
// "sleep MARKER".
func sleepers(marker string) []int {
	want := []byte("sleep\x00" + marker + "\x00")
	var pids []int
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(b, want) {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}
