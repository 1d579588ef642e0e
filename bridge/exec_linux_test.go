package bridge

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/ds4context/adapterkit/contract/conformance"
)

// A descendant that forks without pause while it is being killed leaves
// nothing behind either: a process sent SIGKILL may still finish a fork,
// so the harness scans until every process it signalled is dead.
func TestExecEndsADescendantThatKeepsForking(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	checkGoroutines(t)
	ctx := context.Background()
	mark := fmt.Sprintf("%d.%09d", 200000+os.Getpid(), time.Now().Nanosecond())
	inst, err := childFactory("churn", Options{}, churnEnv+"="+mark).Create(ctx, conformance.Setup{Fixture: conformance.NewFixture(), Transport: conformance.NewRecordingTransport()})
	if err != nil {
		t.Fatal(err)
	}
	said, err := inst.Adapter.TrustedProjectRoot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	shell, err := strconv.Atoi(said)
	if err != nil {
		t.Fatalf("shell id %q", said)
	}
	// Whatever happens, nothing may keep forking after the test.
	defer func() {
		_ = syscall.Kill(shell, syscall.SIGKILL)
		for _, pid := range runningSleepers(mark) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}()
	// Cleanup may report the shell's death; what matters is what is left.
	_ = inst.Cleanup(ctx)
	if syscall.Kill(shell, 0) == nil {
		if e, ok := readStat(shell); ok && !e.zombie {
			t.Error("the forking shell outlived the cleanup")
		}
	}
	if left := runningSleepers(mark); len(left) > 0 {
		t.Errorf("%d sleepers outlived the cleanup", len(left))
	}
}

// runningSleepers returns the processes whose command line is
// "sleep MARK" and that are not zombies.
func runningSleepers(mark string) []int {
	want := []byte("sleep\x00" + mark + "\x00")
	var pids []int
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range paths {
		if b, err := os.ReadFile(p); err != nil || !bytes.Equal(b, want) {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if e, ok := readStat(pid); err == nil && ok && !e.zombie {
			pids = append(pids, pid)
		}
	}
	return pids
}
