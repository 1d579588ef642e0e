//go:build unix

package bridge

import (
	"os/exec"
	"syscall"
)

// setProcessGroup starts the child in a process group of its own, so that
// killing the group also kills what the child started.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killProcessGroup sends SIGKILL to the child's process group, and to the
// child itself in case it left the group.
func killProcessGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Process.Kill()
	}
}

// stopProcess stops the child, so that it starts nothing while the
// processes it started are killed.
func stopProcess(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Signal(syscall.SIGSTOP)
	}
}
