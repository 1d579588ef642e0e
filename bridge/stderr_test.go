package bridge

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

// The processes of one factory copy their standard error to the same
// writer at once; a writer that is not safe for concurrent use (a
// bytes.Buffer here) must still receive every line whole. The race
// detector failed this before writes were serialised.
func TestProcessesShareANonFileStderr(t *testing.T) {
	var buf bytes.Buffer
	const procs, lines = 4, 300
	script := `i=0; while [ $i -lt 300 ]; do echo "line $i of $0" >&2; i=$((i+1)); done`
	f := NewFactory(ExecConfig{Path: "/bin/sh", Args: []string{"-c", script, "p"}, Stderr: &buf}).(*execFactory)
	var wg sync.WaitGroup
	errs := make(chan error, procs)
	for range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := startProcess(f.cfg)
			if err != nil {
				errs <- err
				return
			}
			p.stdin.Close()
			p.stdout.Close()
			errs <- p.cmd.Wait()
			releaseSubreaper()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got := strings.Count(buf.String(), " of p\n")
	if got != procs*lines {
		t.Fatalf("stderr holds %d whole lines; want %d", got, procs*lines)
	}
}
