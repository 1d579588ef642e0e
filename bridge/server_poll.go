//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package bridge

import (
	"io"
	"os"
	"syscall"
)

// pollableInput returns in, or, when in is a pipe (the stdin of an adapter
// process), a duplicate of it that reads through the runtime's poller: the
// reading goroutine parks instead of holding a thread in read(2), which
// makes a round trip measurably faster. Terminals and regular files are
// left alone. O_NONBLOCK belongs to the open pipe, not to the descriptor,
// so release closes the duplicate (which waits for a read in progress to
// end) and then puts back, through in's own descriptor, the blocking mode
// the pipe had.
func pollableInput(in io.Reader) (r io.Reader, release func()) {
	none := func() {}
	f, ok := in.(*os.File)
	if !ok {
		return in, none
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return in, none
	}
	orig := int(f.Fd())
	fd, err := syscall.Dup(orig)
	if err != nil {
		return in, none
	}
	syscall.CloseOnExec(fd)
	flags, err := fcntl(fd, syscall.F_GETFL, 0)
	if err != nil || flags&syscall.O_NONBLOCK != 0 {
		// Already non-blocking: os.File reads it through the poller.
		syscall.Close(fd)
		return in, none
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return in, none
	}
	dup := os.NewFile(uintptr(fd), f.Name())
	return dup, func() {
		dup.Close()
		_ = syscall.SetNonblock(orig, false)
	}
}

func fcntl(fd int, cmd int, arg int) (int, error) {
	r, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), uintptr(cmd), uintptr(arg))
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}
