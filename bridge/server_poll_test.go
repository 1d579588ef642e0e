//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package bridge

import (
	"bufio"
	"context"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
)

func isNonblock(t *testing.T, fd int) bool {
	t.Helper()
	flags, err := fcntl(fd, syscall.F_GETFL, 0)
	if err != nil {
		t.Fatal(err)
	}
	return flags&syscall.O_NONBLOCK != 0
}

// Serve reads a blocking pipe through the poller, and leaves it blocking.
func TestServeReadsABlockingPipeThroughThePoller(t *testing.T) {
	checkGoroutines(t)
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil {
		t.Fatal(err)
	}
	in, w := os.NewFile(uintptr(p[0]), "in"), os.NewFile(uintptr(p[1]), "w")
	defer in.Close()
	defer w.Close()
	if isNonblock(t, p[0]) {
		t.Fatal("a new pipe is non-blocking")
	}
	r, release := pollableInput(in)
	if r == io.Reader(in) || !isNonblock(t, p[0]) {
		t.Fatal("a blocking pipe is not read through the poller")
	}
	release()
	if isNonblock(t, p[0]) {
		t.Fatal("release left the pipe non-blocking")
	}

	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Serve(context.Background(), &fakeFactory{}, in, outW)
		outW.Close()
	}()
	if _, err := io.WriteString(w, `{"id":1,"method":"hello","params":{"protocol":"runtime-adapter-bridge-v1"}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil || !strings.Contains(line, `"factory":"fake-factory"`) {
		t.Fatalf("hello answered %q, %v", line, err)
	}
	w.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if isNonblock(t, p[0]) {
		t.Fatal("Serve left its input non-blocking")
	}
	sr := strings.NewReader("")
	if r, _ := pollableInput(sr); r != io.Reader(sr) {
		t.Fatal("a reader that is not a pipe was replaced")
	}
}
