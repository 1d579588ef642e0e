package reference

import (
	"os"
	"syscall"
)

// changeTime returns fi's status change time (ctime) in nanoseconds, or 0
// when the platform does not expose it. Unlike the modification time, no
// system call can set it back.
func changeTime(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctim.Nano()
	}
	return 0
}
