package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// scratchArg is the hidden entry point that makes a run's scratch file
// system: SIZE, with the socket to send it back on as descriptor 3.
const scratchArg = "__ask_sandbox_scratch"

// The scratch directory is a tmpfs of its own, so that its size is
// bounded: one file system per run, made once by a short-lived child in a
// user namespace (where an unprivileged user may make a tmpfs) and kept by
// ask as a detached mount. Each command's child mounts a copy of it (the
// same files) on the scratch directory, so caches last from one command to
// the next. Copying a detached mount needs Linux 6.15.

// makeScratchFS starts the child that makes the file system and returns
// the detached mount it sends back.
func makeScratchFS(how string, size int64) (*os.File, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	ours, theirs := os.NewFile(uintptr(pair[0]), "scratch socket"), os.NewFile(uintptr(pair[1]), "scratch socket")
	defer ours.Close()
	cmd := exec.Command(self, scratchArg, strconv.FormatInt(size, 10))
	cmd.ExtraFiles = []*os.File{theirs}
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	nsAttr(cmd.SysProcAttr, how, true)
	cmd.SysProcAttr.Cloneflags &^= syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC
	out, err := cmd.CombinedOutput()
	theirs.Close()
	if err != nil {
		if msg := strings.TrimSpace(string(out)); msg != "" {
			return nil, errors.New(msg)
		}
		return nil, err
	}
	buf := make([]byte, unix.CmsgSpace(4))
	_, oobn, _, _, err := unix.Recvmsg(pair[0], nil, buf, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return nil, err
	}
	msgs, err := unix.ParseSocketControlMessage(buf[:oobn])
	if err != nil || len(msgs) != 1 {
		return nil, fmt.Errorf("no file system came back: %v", err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return nil, fmt.Errorf("no file system came back: %v", err)
	}
	return os.NewFile(uintptr(fds[0]), "scratch file system"), nil
}

// scratchMain is the child that makes the file system.
func scratchMain(args []string) error {
	if len(args) != 1 {
		return errors.New("the scratch child was started without its size")
	}
	fs, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return fmt.Errorf("cannot make a tmpfs: %w", err)
	}
	for _, kv := range [][2]string{{"size", args[0]}, {"mode", "0700"}} {
		if err := unix.FsconfigSetString(fs, kv[0], kv[1]); err != nil {
			return fmt.Errorf("cannot make a tmpfs of %s bytes: %w", args[0], err)
		}
	}
	if err := unix.FsconfigCreate(fs); err != nil {
		return fmt.Errorf("cannot make a tmpfs: %w", err)
	}
	mnt, err := unix.Fsmount(fs, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV)
	if err != nil {
		return fmt.Errorf("cannot make a tmpfs: %w", err)
	}
	return unix.Sendmsg(3, []byte{0}, unix.UnixRights(mnt), nil, 0)
}

// mountScratch mounts a copy of the run's scratch file system (descriptor
// fd) on dir, and makes the directories the environment points to.
func mountScratch(fd int, dir string) error {
	tree, err := unix.OpenTree(fd, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH)
	if err != nil {
		return fmt.Errorf("cannot copy the scratch file system (it needs Linux 6.15): %w", err)
	}
	defer unix.Close(tree)
	if err := unix.MoveMount(tree, "", unix.AT_FDCWD, dir, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("cannot mount the scratch file system: %w", err)
	}
	for _, v := range scratchVars {
		if err := os.MkdirAll(filepath.Join(dir, v.dir), 0o700); err != nil {
			return fmt.Errorf("scratch directory: %w", err)
		}
	}
	return nil
}

// scratchFS is the run's scratch file system, made at the first command.
func (s *Sandbox) scratchFS() (*os.File, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.scratch == nil && s.scratchErr == nil {
		s.scratch, s.scratchErr = makeScratchFS(s.Support.Namespaces, s.Policy.scratchSize())
	}
	return s.scratch, s.scratchErr
}

// probeScratch says whether a scratch file system can be made and mounted
// here, "" when it can.
func probeScratch(how string) string {
	fs, err := makeScratchFS(how, 1<<20)
	if err != nil {
		return err.Error()
	}
	defer fs.Close()
	self, err := os.Executable()
	if err != nil {
		return err.Error()
	}
	cmd := exec.Command(self, probeArg, "scratch")
	cmd.ExtraFiles = []*os.File{fs}
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	nsAttr(cmd.SysProcAttr, how, true)
	if out, err := cmd.CombinedOutput(); err != nil {
		if msg := strings.TrimSpace(string(out)); msg != "" {
			return msg
		}
		return err.Error()
	}
	return ""
}
