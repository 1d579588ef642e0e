//go:build !unix

package bridge

import "os/exec"

// setProcessGroup does nothing where process groups are not available.
func setProcessGroup(*exec.Cmd) {}

// killProcessGroup kills the child itself where process groups are not
// available.
func killProcessGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

// stopProcess does nothing where processes cannot be stopped.
func stopProcess(*exec.Cmd) {}
