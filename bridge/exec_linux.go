//go:build linux

package bridge

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// prSetChildSubreaper is prctl's PR_SET_CHILD_SUBREAPER.
const prSetChildSubreaper = 36

// The harness is a child subreaper while at least one adapter process
// lives: an orphan among the adapter's descendants (the child of a process
// that exited, such as a daemon that forked twice and called setsid) is
// then adopted by the harness instead of by init, so it stays in the
// harness's process tree where it can be found, killed and reaped.
var subreaper struct {
	mu   sync.Mutex
	live int
}

// acquireSubreaper makes the harness a child subreaper for one more
// adapter process.
func acquireSubreaper() {
	subreaper.mu.Lock()
	defer subreaper.mu.Unlock()
	if subreaper.live == 0 {
		setSubreaper(1)
	}
	subreaper.live++
}

// releaseSubreaper ends acquireSubreaper; the last release turns the
// attribute off again, so that a host program's own orphans go to init as
// usual once no adapter process is left.
func releaseSubreaper() {
	subreaper.mu.Lock()
	defer subreaper.mu.Unlock()
	subreaper.live--
	if subreaper.live == 0 {
		setSubreaper(0)
	}
}

func setSubreaper(on uintptr) {
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, on, 0)
}

// procEntry is what /proc says of one process.
type procEntry struct {
	ppid   int
	zombie bool
}

// readProcs lists the processes /proc shows.
func readProcs() map[int]procEntry {
	procs := make(map[int]procEntry)
	dir, err := os.Open("/proc")
	if err != nil {
		return procs
	}
	defer dir.Close()
	names, _ := dir.Readdirnames(-1)
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if e, ok := readStat(pid); ok {
			procs[pid] = e
		}
	}
	return procs
}

// readStat reads a process's parent and state from /proc/PID/stat.
func readStat(pid int) (procEntry, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procEntry{}, false
	}
	// "PID (COMM) STATE PPID …"; COMM may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procEntry{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 2 {
		return procEntry{}, false
	}
	ppid, err := strconv.Atoi(string(f[1]))
	if err != nil {
		return procEntry{}, false
	}
	return procEntry{ppid: ppid, zombie: string(f[0]) == "Z" || string(f[0]) == "X"}, true
}

// carriesMark reports whether a process's environment holds mark.
func carriesMark(pid int, mark []byte) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for _, kv := range bytes.Split(b, []byte{0}) {
		if bytes.Equal(kv, mark) {
			return true
		}
	}
	return false
}

// descendantsOf returns the processes that descend from leader, or from an
// orphan the harness adopted whose environment carries mark, and those
// adopted orphans themselves; leader is not included.
func descendantsOf(procs map[int]procEntry, leader int, mark []byte) map[int]procEntry {
	self := os.Getpid()
	children := make(map[int][]int)
	var roots []int
	for pid, e := range procs {
		children[e.ppid] = append(children[e.ppid], pid)
		if e.ppid == self && pid != leader && !e.zombie && carriesMark(pid, mark) {
			roots = append(roots, pid)
		}
	}
	out := make(map[int]procEntry)
	queue := append(children[leader], roots...)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if _, seen := out[pid]; seen || pid == leader || pid == self {
			continue
		}
		out[pid] = procs[pid]
		queue = append(queue, children[pid]...)
	}
	return out
}

// killDescendants kills every descendant of leader (see descendantsOf),
// over and over until a scan finds none left alive, so that a process
// forked during the kill is found by a later scan (a fork copies the
// environment, mark included). A process sent SIGKILL may still finish a
// fork it had begun, so the scans go on until every process signalled is
// dead: only then can the last scan have missed no child. Call it before
// leader is reaped, so that its id names it. It records in found the
// processes it signalled, and zombies it found among the descendants, for
// reapDescendants.
func killDescendants(leader int, mark []byte, found map[int]bool) {
	pause := 100 * time.Microsecond
	for range 1000 {
		signalled, dying := false, false
		for pid, e := range descendantsOf(readProcs(), leader, mark) {
			switch {
			case e.zombie:
				found[pid] = true
			case found[pid]:
				dying = true // signalled by an earlier scan, not dead yet
			case syscall.Kill(pid, syscall.SIGKILL) == nil:
				found[pid] = true
				signalled = true
			}
		}
		switch {
		case signalled:
			pause = 100 * time.Microsecond
		case !dying:
			return
		default:
			// Each step is the kernel finishing a death: the pause stays
			// short, and 1000 scans bound the whole wait.
			time.Sleep(pause)
			pause = min(2*pause, 10*time.Millisecond)
		}
	}
}

// reapBound bounds how long reapDescendants waits for the processes it
// killed to be handed to the harness and reaped.
const reapBound = 10 * time.Second

// reapDescendants waits until every process in found is gone: once its
// parent has died it is the harness's child (the harness is a subreaper),
// and the harness reaps it. It returns an error naming how many are left
// after reapBound.
func reapDescendants(found map[int]bool) error {
	self := os.Getpid()
	deadline := time.Now().Add(reapBound)
	pause := 100 * time.Microsecond
	for len(found) > 0 {
		for pid := range found {
			e, ok := readStat(pid)
			if !ok {
				delete(found, pid) // reaped by its parent, or by us below
				continue
			}
			if e.ppid != self {
				continue // its parent is still dying; it comes to us next
			}
			var ws syscall.WaitStatus
			wpid, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
			if wpid == pid || errors.Is(err, syscall.ECHILD) {
				delete(found, pid)
			}
		}
		if len(found) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bridge: %d processes the adapter started did not end within %s", len(found), reapBound)
		}
		// The processes were sent SIGKILL: each step is the kernel
		// finishing a death, so the pause stays short.
		time.Sleep(pause)
		pause = min(2*pause, 10*time.Millisecond)
	}
	return nil
}
