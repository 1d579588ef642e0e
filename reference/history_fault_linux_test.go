package reference

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/ds4context/adapterkit/contract"
)

// The fault tests run children that write histories where the disk fills
// up or is read-only: a child whose file size limit (RLIMIT_FSIZE) is
// set, which anyone can do, and, where unprivileged user namespaces (or
// root) allow it, a child in a mount namespace of its own with a 1 MiB
// tmpfs, and one with a read-only file system.

func init() {
	moreChildren["disk-full"] = childDiskFull
	moreChildren["read-only"] = childReadOnly
	moreChildren["no-permission"] = childNoPermission
}

// bigMessage carries 64 KiB of text, so that a limit is reached in the
// middle of its write.
func bigMessage(k int) contract.Message {
	m := nextMessage("big-" + strconv.Itoa(k))
	m.Blocks = []contract.Block{&contract.TextBlock{Text: strings.Repeat("y", 64<<10)}}
	return m
}

// childRoom changes how much room the child has to write, the way
// ADAPTERKIT_FULL says: "fsize" sets the file size limit to n bytes (no
// limit for n < 0); "tmpfs" fills the file system with a filler file,
// leaving about n bytes, none when n is less than a page (n < 0 removes
// the filler).
func childRoom(dir string, n int64) error {
	switch os.Getenv("ADAPTERKIT_FULL") {
	case "fsize":
		var lim syscall.Rlimit
		if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
			return err
		}
		lim.Cur = lim.Max
		if n >= 0 {
			lim.Cur = uint64(n)
		}
		return syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim)
	case "tmpfs":
		filler := filepath.Join(dir, "filler")
		os.Remove(filler)
		if n < 0 {
			return nil
		}
		var st syscall.Statfs_t
		if err := syscall.Statfs(dir, &st); err != nil {
			return err
		}
		free := int64(st.Bavail) * st.Bsize
		f, err := os.Create(filler)
		if err != nil {
			return err
		}
		defer f.Close()
		// tmpfs allocates whole pages: less than a page of room is none.
		chunk := make([]byte, 4096)
		for w := int64(0); n < 4096 || w+int64(len(chunk)) <= free-n; w += int64(len(chunk)) {
			if _, err := f.Write(chunk); err != nil {
				break // full
			}
		}
		return nil
	}
	return errors.New("unknown ADAPTERKIT_FULL")
}

func describe(err error) string {
	return fmt.Sprintf("%v|writefailed=%v|enospc=%v|efbig=%v", err, errors.Is(err, ErrWriteFailed),
		errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EFBIG))
}

// childDiskFull runs in ADAPTERKIT_DIR. First, two torn histories (one
// ending in the start of one of this package's records, one in foreign
// bytes) are recovered without room for a side file: it reports
// "recover-own <discarded> <bytes>" and "recover-foreign <error>". Then it
// appends 64 KiB messages to a history until the disk is full, reporting
// "acked <k>" for each and "failed <error>" for the first failure, then
// "readable <messages>" after a snapshot of the file, and "usable" once
// an append succeeds again with room made.
func childDiskFull(report func(string, ...any)) error {
	dir, root := os.Getenv("ADAPTERKIT_DIR"), os.Getenv("ADAPTERKIT_ROOT")
	if os.Getenv("ADAPTERKIT_FULL") == "tmpfs" {
		if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
			return fmt.Errorf("mount: %w", err)
		}
	}
	fx := fixture()
	hd := Header{RuntimeID: fx.RuntimeID, SessionID: fx.SessionID, ProjectRoot: root}
	ctx := context.Background()
	torn := func(name, tail string) (string, error) {
		path := filepath.Join(dir, name)
		if err := CreateHistory(ctx, path, hd, fx.Messages); err != nil {
			return "", err
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return "", err
		}
		defer f.Close()
		_, err = f.WriteString(tail)
		return path, err
	}
	own, err := torn("own.jsonl", `{"type":"message","message":{"id":"`+strings.Repeat("z", 300))
	if err != nil {
		return err
	}
	foreign, err := torn("foreign.jsonl", strings.Repeat("not a record ", 30))
	if err != nil {
		return err
	}
	foreignBefore, err := os.ReadFile(foreign)
	if err != nil {
		return err
	}
	if err := childRoom(dir, 100); err != nil {
		return err
	}
	r, err := RecoverHistory(ctx, own)
	if err != nil {
		return fmt.Errorf("recover own tail: %s", describe(err))
	}
	report("recover-own %v %d %q", r.Discarded, r.Bytes, r.SideFile)
	_, err = RecoverHistory(ctx, foreign)
	after, rerr := os.ReadFile(foreign)
	if rerr != nil || string(after) != string(foreignBefore) {
		return errors.New("a refused recovery changed the file")
	}
	report("recover-foreign %s", describe(err))
	if err := childRoom(dir, -1); err != nil {
		return err
	}

	path := filepath.Join(dir, "session.jsonl")
	if err := CreateHistory(ctx, path, hd, fx.Messages); err != nil {
		return err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	h, err := OpenHistory(ctx, path)
	if err != nil {
		return err
	}
	defer h.Close()
	// Room for three and a half messages.
	if err := childRoom(dir, fi.Size()+7*(32<<10)); err != nil {
		return err
	}
	acked := 0
	for k := 0; ; k++ {
		if k == 100 {
			return errors.New("the disk never filled up")
		}
		if err := h.Append(ctx, bigMessage(k)); err != nil {
			report("failed %s", describe(err))
			break
		}
		acked++
		report("acked %d", k)
	}
	a, err := New(Options{HistoryPath: path, RuntimeID: fx.RuntimeID, ProjectRoot: root, Model: &fx.Model, Transport: &recorder{}})
	if err != nil {
		return err
	}
	snap, err := a.SnapshotHistory(ctx)
	if err != nil {
		return fmt.Errorf("snapshot after the disk filled up: %w", err)
	}
	if len(snap.Messages) != len(fx.Messages)+acked || snap.Revision != h.Revision() {
		return errors.New("the snapshot is not the acknowledged history")
	}
	report("readable %d", len(snap.Messages))
	if err := childRoom(dir, -1); err != nil {
		return err
	}
	if err := h.Append(ctx, bigMessage(1000)); err != nil {
		return fmt.Errorf("append with room again: %s", describe(err))
	}
	report("usable")
	return nil
}

// childReadOnly mounts a tmpfs at ADAPTERKIT_DIR, creates a history in
// it, remounts it read-only and reports what each writer and a reader
// get: "<operation> <error>".
func childReadOnly(report func(string, ...any)) error {
	dir, root := os.Getenv("ADAPTERKIT_DIR"), os.Getenv("ADAPTERKIT_ROOT")
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
		return fmt.Errorf("mount: %w", err)
	}
	fx := fixture()
	hd := Header{RuntimeID: fx.RuntimeID, SessionID: fx.SessionID, ProjectRoot: root}
	ctx := context.Background()
	path := filepath.Join(dir, "session.jsonl")
	if err := CreateHistory(ctx, path, hd, fx.Messages); err != nil {
		return err
	}
	if err := syscall.Mount("", dir, "", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		return fmt.Errorf("remount: %w", err)
	}
	return reportUnwritable(report, dir, root, syscall.EROFS)
}

// childNoPermission reports what each writer and a reader get on a
// history at ADAPTERKIT_DIR that this process may read but not write, in a
// folder it may not write: "<operation> <error>".
func childNoPermission(report func(string, ...any)) error {
	return reportUnwritable(report, os.Getenv("ADAPTERKIT_DIR"), os.Getenv("ADAPTERKIT_ROOT"), syscall.EACCES)
}

// reportUnwritable reports what each writer and a reader get on the
// history session.jsonl in dir, which this process cannot write for the
// reason errno names: "<operation> readonly=<is ErrReadOnly>|errno=<is
// errno>|<error>" for open, append and create, and "snapshot <messages>".
func reportUnwritable(report func(string, ...any), dir, root string, errno syscall.Errno) error {
	fx := fixture()
	hd := Header{RuntimeID: fx.RuntimeID, SessionID: fx.SessionID, ProjectRoot: root}
	ctx := context.Background()
	path := filepath.Join(dir, "session.jsonl")
	kind := func(err error) string {
		return fmt.Sprintf("readonly=%v|errno=%v|%v", errors.Is(err, ErrReadOnly), errors.Is(err, errno), err)
	}
	_, err := OpenHistory(ctx, path)
	report("open %s", kind(err))
	report("append %s", kind(AppendMessage(ctx, path, nextMessage("n"))))
	report("create %s", kind(CreateHistory(ctx, filepath.Join(dir, "new.jsonl"), hd, fx.Messages)))
	a, err := New(Options{HistoryPath: path, RuntimeID: fx.RuntimeID, ProjectRoot: root, Model: &fx.Model, Transport: &recorder{}})
	if err != nil {
		return err
	}
	snap, err := a.SnapshotHistory(ctx)
	if err != nil {
		return err
	}
	report("snapshot %d", len(snap.Messages))
	return nil
}

// namespaces reports whether this process can start a child in user and
// mount namespaces of its own (unshare -rm).
func namespaces(t *testing.T) bool {
	t.Helper()
	if _, err := exec.LookPath("unshare"); err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10e9)
	defer cancel()
	return exec.CommandContext(ctx, "unshare", "-rm", "true").Run() == nil
}

// readReports collects a child's reports until it exits, and its exit.
func readReports(t *testing.T, c *child) []string {
	t.Helper()
	var lines []string
	for {
		line, ok := c.next(t)
		if !ok {
			break
		}
		lines = append(lines, line)
	}
	if err := c.cmd.Wait(); err != nil {
		t.Fatalf("child: %v (reports %q)", err, lines)
	}
	return lines
}

func reportWith(t *testing.T, lines []string, prefix string) string {
	t.Helper()
	for _, l := range lines {
		if l == prefix {
			return ""
		}
		if rest, ok := strings.CutPrefix(l, prefix+" "); ok {
			return rest
		}
	}
	t.Fatalf("no report %q in %q", prefix, lines)
	return ""
}

// TestDiskFullLeavesAReadableLog fills the disk in the middle of an
// append: the append fails saying what the operating system said, its
// bytes are taken back, the history stays readable with every
// acknowledged message, and the handle appends again once there is room.
// RecoverHistory without room for a side file discards a torn start of
// one of this package's records and refuses foreign bytes.
func TestDiskFullLeavesAReadableLog(t *testing.T) {
	run := func(t *testing.T, full string, wrapper []string, errno string) {
		e := newEnv(t)
		dir := filepath.Join(e.dir, "disk")
		mustNil(t, os.Mkdir(dir, 0o700))
		c := startChildVia(t, wrapper, "disk-full", "ADAPTERKIT_DIR="+dir, "ADAPTERKIT_ROOT="+e.root, "ADAPTERKIT_FULL="+full)
		lines := readReports(t, c)
		if got := reportWith(t, lines, "recover-own"); got != `true 335 ""` {
			t.Errorf("recovery of an own torn record without room: %s", got)
		}
		if got := reportWith(t, lines, "recover-foreign"); !strings.Contains(got, "side file cannot be written: "+errno) ||
			!strings.Contains(got, "writefailed=true") {
			t.Errorf("recovery of a foreign torn record without room: %s", got)
		}
		failed := reportWith(t, lines, "failed")
		if !strings.Contains(failed, "record cannot be written; the file is as it was: "+errno) || !strings.Contains(failed, "writefailed=true") {
			t.Errorf("the failed append: %s", failed)
		}
		acked := 0
		for _, l := range lines {
			if strings.HasPrefix(l, "acked ") {
				acked++
			}
		}
		if got, want := reportWith(t, lines, "readable"), strconv.Itoa(len(fixture().Messages)+acked); got != want || acked == 0 {
			t.Errorf("readable %s messages after %d acknowledged appends", got, acked)
		}
		reportWith(t, lines, "usable")
		t.Logf("%s: %d appends acknowledged, then: %s", full, acked, strings.SplitN(failed, "|", 2)[0])
	}
	t.Run("file size limit", func(t *testing.T) { run(t, "fsize", nil, "file too large") })
	t.Run("full tmpfs", func(t *testing.T) {
		if !namespaces(t) {
			t.Skip("no user and mount namespaces here")
		}
		run(t, "tmpfs", []string{"unshare", "-rm"}, "no space left on device")
	})
}

// TestReadOnlyFileSystem remounts the history's file system read-only:
// writers fail with ErrReadOnly naming EROFS, and readers still read.
func TestReadOnlyFileSystem(t *testing.T) {
	if !namespaces(t) {
		t.Skip("no user and mount namespaces here")
	}
	e := newEnv(t)
	dir := filepath.Join(e.dir, "disk")
	mustNil(t, os.Mkdir(dir, 0o700))
	lines := readReports(t, startChildVia(t, []string{"unshare", "-rm"}, "read-only", "ADAPTERKIT_DIR="+dir, "ADAPTERKIT_ROOT="+e.root))
	for _, op := range []string{"open", "append", "create"} {
		if got := reportWith(t, lines, op); !strings.HasPrefix(got, "readonly=true|errno=true|") || !strings.HasSuffix(got, ": read-only file system") {
			t.Errorf("%s on a read-only file system: %s", op, got)
		}
	}
	if got := reportWith(t, lines, "snapshot"); got != strconv.Itoa(len(fixture().Messages)) {
		t.Errorf("snapshot of %s messages", got)
	}
}

// TestNoWritePermission gives a history its writers may read but not
// write, in a folder they may not write: they fail with ErrReadOnly naming
// EACCES, and readers still read. Root may write anything, so as root the
// child runs as the unprivileged user 65534 (setpriv), from a copy of the
// test binary it may run.
func TestNoWritePermission(t *testing.T) {
	var wrapper []string
	if os.Geteuid() == 0 {
		if _, err := exec.LookPath("setpriv"); err != nil {
			t.Skip("running as root without setpriv: no user to lack the permission")
		}
		wrapper = []string{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"}
	}
	// A folder others may enter and read: t.TempDir's parents are private.
	dir, err := os.MkdirTemp("", "adapterkit-no-permission-")
	mustNil(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	root, err := filepath.EvalSymlinks(dir)
	mustNil(t, err)
	fx := fixture()
	path := filepath.Join(root, "session.jsonl")
	mustNil(t, CreateHistory(context.Background(), path, Header{RuntimeID: fx.RuntimeID, SessionID: fx.SessionID, ProjectRoot: root}, fx.Messages))
	bin := filepath.Join(root, "child.test")
	self, err := os.ReadFile(os.Args[0])
	mustNil(t, err)
	mustNil(t, os.WriteFile(bin, self, 0o755))
	before, err := os.ReadFile(path)
	mustNil(t, err)
	mustNil(t, os.Chmod(path, 0o444))
	mustNil(t, os.Chmod(root, 0o555))
	t.Cleanup(func() { os.Chmod(root, 0o700) })
	lines := readReports(t, startChildOf(t, wrapper, bin, "no-permission", "ADAPTERKIT_DIR="+root, "ADAPTERKIT_ROOT="+root))
	for _, op := range []string{"open", "append", "create"} {
		if got := reportWith(t, lines, op); !strings.HasPrefix(got, "readonly=true|errno=true|") || !strings.HasSuffix(got, ": permission denied") {
			t.Errorf("%s without write permission: %s", op, got)
		}
	}
	if got := reportWith(t, lines, "snapshot"); got != strconv.Itoa(len(fx.Messages)) {
		t.Errorf("snapshot of %s messages", got)
	}
	after, err := os.ReadFile(path)
	mustNil(t, err)
	if !bytes.Equal(before, after) {
		t.Error("the history changed")
	}
}

func init() { moreChildren["permissions"] = childPermissions }

// childPermissions works in ADAPTERKIT_DIR, which this process owns and
// whose permissions it changes. It reports "<step> <kind>" for each step:
// kind is "ok" or "readonly=<is ErrReadOnly>|eacces=<is
// EACCES>|concurrent=<is ErrConcurrentWrite>|corrupt=<is
// ErrHistoryCorrupt>|<error>".
func childPermissions(report func(string, ...any)) error {
	dir := os.Getenv("ADAPTERKIT_DIR")
	fx := fixture()
	ctx := context.Background()
	above := filepath.Join(dir, "above")
	root := filepath.Join(above, "project")
	folder := filepath.Join(dir, "history")
	path := filepath.Join(folder, "session.jsonl")
	if err := os.MkdirAll(root, 0o700); err != nil {
		return err
	}
	if err := CreateHistory(ctx, path, Header{RuntimeID: fx.RuntimeID, SessionID: fx.SessionID, ProjectRoot: root}, fx.Messages); err != nil {
		return err
	}
	kind := func(err error) string {
		if err == nil {
			return "ok"
		}
		return fmt.Sprintf("readonly=%v|eacces=%v|concurrent=%v|corrupt=%v|%v", errors.Is(err, ErrReadOnly),
			errors.Is(err, syscall.EACCES), errors.Is(err, ErrConcurrentWrite), errors.Is(err, ErrHistoryCorrupt), err)
	}
	adapter := func() (*Adapter, error) {
		return New(Options{HistoryPath: path, RuntimeID: fx.RuntimeID, ProjectRoot: root, Model: &fx.Model, Transport: &recorder{}})
	}
	snapshot := func() error {
		a, err := adapter()
		if err != nil {
			return err
		}
		_, err = a.SnapshotHistory(ctx)
		return err
	}
	h, err := OpenHistory(ctx, path)
	if err != nil {
		return err
	}
	defer h.Close()
	acked := len(fx.Messages)
	step := func(name string, err error) {
		if err == nil && strings.HasPrefix(name, "append") {
			acked++
		}
		report("%s %s", name, kind(err))
	}
	step("append", h.Append(ctx, nextMessage("p-1")))

	// The history's folder may not be searched: writers and readers are
	// told so, and the open History appends again once it may.
	if err := os.Chmod(folder, 0); err != nil {
		return err
	}
	step("append-folder-closed", h.Append(ctx, nextMessage("p-2")))
	step("append-folder-closed-again", h.Append(ctx, nextMessage("p-2")))
	step("snapshot-folder-closed", snapshot())
	_, err = OpenHistory(ctx, path)
	step("open-folder-closed", err)
	step("appendmessage-folder-closed", AppendMessage(ctx, path, nextMessage("p-x")))
	_, err = RecoverHistory(ctx, path)
	step("recover-folder-closed", err)
	// Closed while a record is written: it is taken back.
	h.checking = func() { os.Chmod(folder, 0) }
	if err := os.Chmod(folder, 0o700); err != nil {
		return err
	}
	step("append-folder-closed-while-written", h.Append(ctx, nextMessage("p-2")))
	h.checking = nil
	if err := os.Chmod(folder, 0o700); err != nil {
		return err
	}
	step("append-folder-open", h.Append(ctx, nextMessage("p-2")))

	// The history itself may not be read or written: the open History
	// still writes it (its permissions were checked when it was opened);
	// anything opening it is refused.
	if err := os.Chmod(path, 0); err != nil {
		return err
	}
	step("append-file-closed", h.Append(ctx, nextMessage("p-3")))
	step("snapshot-file-closed", snapshot())
	if err := os.Chmod(path, 0o600); err != nil {
		return err
	}
	step("append-file-open", h.Append(ctx, nextMessage("p-4")))

	// A folder above the header's project root may not be searched: a
	// snapshot, cold or from a cache, cannot resolve the root.
	cold, err := adapter()
	if err != nil {
		return err
	}
	warm, err := adapter()
	if err != nil {
		return err
	}
	if _, err := warm.SnapshotHistory(ctx); err != nil {
		return err
	}
	if err := os.Chmod(above, 0); err != nil {
		return err
	}
	_, err = cold.SnapshotHistory(ctx)
	step("snapshot-root-closed-cold", err)
	_, err = warm.SnapshotHistory(ctx)
	step("snapshot-root-closed-warm", err)
	if err := os.Chmod(above, 0o700); err != nil {
		return err
	}
	if err := snapshot(); err != nil {
		return err
	}
	report("acked %d len %d", acked, h.Len())
	return nil
}

// TestPermissionErrorsSayPermission takes away the permissions of a
// history's folder and of the history under an open History: writers
// and readers fail with ErrReadOnly wrapping EACCES — never
// ErrHistoryCorrupt, never "replaced" — and the History appends again
// once the permissions are back. Root may read and write anything, so as
// root the child runs as the unprivileged user 65534 (setpriv), from a
// copy of the test binary it may run, in a folder it owns.
func TestPermissionErrorsSayPermission(t *testing.T) {
	var wrapper []string
	dir, err := os.MkdirTemp("", "adapterkit-permissions-")
	mustNil(t, err)
	t.Cleanup(func() {
		filepath.WalkDir(dir, func(p string, _ os.DirEntry, _ error) error { os.Chmod(p, 0o700); return nil })
		os.RemoveAll(dir)
	})
	if os.Geteuid() == 0 {
		if _, err := exec.LookPath("setpriv"); err != nil {
			t.Skip("running as root without setpriv: no user to lack the permission")
		}
		wrapper = []string{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"}
		mustNil(t, os.Chown(dir, 65534, 65534))
	}
	dir, err = filepath.EvalSymlinks(dir)
	mustNil(t, err)
	bin := filepath.Join(dir, "child.test")
	self, err := os.ReadFile(os.Args[0])
	mustNil(t, err)
	mustNil(t, os.WriteFile(bin, self, 0o755))
	work := filepath.Join(dir, "work")
	mustNil(t, os.Mkdir(work, 0o700))
	if os.Geteuid() == 0 {
		mustNil(t, os.Chown(work, 65534, 65534))
	}
	lines := readReports(t, startChildOf(t, wrapper, bin, "permissions", "ADAPTERKIT_DIR="+work))
	denied := func(got string) bool {
		return strings.HasPrefix(got, "readonly=true|eacces=true|concurrent=false|corrupt=false|") && strings.HasSuffix(got, ": permission denied")
	}
	for _, step := range []string{"append-folder-closed", "append-folder-closed-again", "snapshot-folder-closed",
		"open-folder-closed", "appendmessage-folder-closed", "recover-folder-closed", "append-folder-closed-while-written",
		"snapshot-file-closed", "snapshot-root-closed-cold", "snapshot-root-closed-warm"} {
		if got := reportWith(t, lines, step); !denied(got) {
			t.Errorf("%s: %s", step, got)
		}
	}
	for _, step := range []string{"append", "append-folder-open", "append-file-closed", "append-file-open"} {
		if got := reportWith(t, lines, step); got != "ok" {
			t.Errorf("%s: %s", step, got)
		}
	}
	if got, n := reportWith(t, lines, "acked"), len(fixture().Messages)+4; got != fmt.Sprintf("%d len %d", n, n) {
		t.Errorf("acknowledged and held: %s", got)
	}
}
