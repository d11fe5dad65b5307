package sandbox

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// isolate builds the command's view of the system in its new mount
// namespace: everything read-only but the scratch directory (and the
// working directory at Level Workdir), what git executes read-only even
// there, the credential stores replaced by empty unreadable ones, the
// run's bounded scratch file system on the scratch directory, and /proc,
// /dev/pts and /dev/shm of the sandbox's own.
func isolate(p Policy, scratchFD int) (git []gitDir, err error) {
	if !p.AllowNetwork {
		// In a network namespace of its own, loopback is down: bring it up
		// so that tests can listen on 127.0.0.1. Nothing outside is reachable
		// either way, so a failure here only keeps more out.
		loopbackUp()
	}
	cwd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("cannot find the working directory: %w", err)
	}
	// Nothing mounted here reaches the host, and nothing mounted there
	// appears here.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return nil, fmt.Errorf("cannot make the mount tree private: %w", err)
	}
	writable := []string{p.Scratch}
	if p.Level == Workdir {
		writable = append(writable, p.Workdir)
	}
	for _, w := range writable {
		if err := unix.Mount(w, w, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return nil, fmt.Errorf("cannot bind %s: %w", w, err)
		}
	}
	ro := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID}
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, ro); err != nil {
		return nil, fmt.Errorf("cannot make the system read-only: %w", err)
	}
	// Only the top is made writable: a mount beneath that was read-only on
	// the host must stay so, and one that was not is not worth the doubt.
	rw := &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}
	for _, w := range writable {
		if err := unix.MountSetattr(unix.AT_FDCWD, w, 0, rw); err != nil {
			return nil, fmt.Errorf("cannot make %s writable: %w", w, err)
		}
	}
	if p.Level == Workdir {
		if git, err = protectGit(p.Workdir); err != nil {
			return nil, err
		}
	}
	if err := hide(p); err != nil {
		return nil, err
	}
	if scratchFD > 0 {
		if err := mountScratch(scratchFD, p.Scratch); err != nil {
			return nil, err
		}
	}
	if err := ownDevices(); err != nil {
		return nil, err
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return nil, fmt.Errorf("cannot mount /proc for the new PID namespace: %w", err)
	}
	if kernelAtLeast(6, 14) {
		// pid_max belongs to the PID namespace from Linux 6.14 (before, it
		// is the whole machine's): the process limit that holds for root.
		// PIDs below 301 are the least it takes.
		os.WriteFile("/proc/sys/kernel/pid_max", []byte(strconv.Itoa(max(p.maxProcesses(), 301))), 0)
	}
	// No user namespace below this one, where a command would hold
	// capabilities again (clone3's flags are beyond seccomp's sight).
	os.WriteFile("/proc/sys/user/max_user_namespaces", []byte("0"), 0)
	// Kernel settings are not the command's: as root (uid 0 mapped to the
	// host's) it could otherwise write the machine's, capabilities or not.
	for _, path := range []string{"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs"} {
		if _, err := os.Stat(path); err != nil {
			continue
		}
		if err := readOnly(path); err != nil {
			return nil, err
		}
	}
	// The working directory was entered before the mounts: enter it again
	// to see them.
	if err := os.Chdir(cwd); err != nil {
		return nil, fmt.Errorf("cannot enter the working directory again: %w", err)
	}
	return git, nil
}

// readOnly binds path onto itself, read-only: it can be neither written
// nor replaced (a mount point cannot be renamed over or removed).
func readOnly(path string) error {
	if err := unix.Mount(path, path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("cannot bind %s: %w", path, err)
	}
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID}
	if err := unix.MountSetattr(unix.AT_FDCWD, path, unix.AT_RECURSIVE, attr); err != nil {
		return fmt.Errorf("cannot make %s read-only: %w", path, err)
	}
	return nil
}

// hooksPaths are the values of core.hooksPath in a git config file, read
// plainly: it is git's own file, and a value read too eagerly only
// protects more.
func hooksPaths(config string) []string {
	f, err := os.Open(config)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if ok && strings.EqualFold(strings.TrimSpace(name), "hooksPath") {
			out = append(out, strings.Trim(strings.TrimSpace(value), `"`))
		}
	}
	return out
}

// protectGit leaves the working directory's git directories writable only
// where git writes in ordinary work (protectGitDirs), and makes read-only
// the pointer file of a worktree or submodule and a hooks directory that
// core.hooksPath names inside the working directory. It returns the git
// directories as they were, for sweepGitDirs.
func protectGit(workdir string) ([]gitDir, error) {
	dotgit := filepath.Join(workdir, ".git")
	info, err := os.Lstat(dotgit)
	switch {
	case err != nil:
		return nil, nil
	case !info.IsDir():
		// A worktree's or submodule's pointer to its git directory.
		return nil, readOnly(dotgit)
	}
	prepareGit(workdir)
	dirs := gitDirs(workdir)
	if err := protectGitDirs(dirs); err != nil {
		return nil, err
	}
	for _, d := range dirs {
		if !d.Git {
			continue
		}
		for _, h := range hooksPaths(filepath.Join(d.Path, "config")) {
			if !filepath.IsAbs(h) {
				h = filepath.Join(workdir, h)
			}
			if real, err := filepath.EvalSymlinks(h); err == nil && within(real, workdir) {
				if err := readOnly(real); err != nil {
					return nil, err
				}
			}
		}
	}
	return dirs, nil
}

// hide replaces each credential store with an empty, read-only one that
// nobody without a capability can read: a directory with an empty
// file system, a file with an empty file.
func hide(p Policy) error {
	paths := hiddenPaths(p)
	if len(paths) == 0 {
		return nil
	}
	// The empty file lives in a small file system of its own, mounted on
	// the scratch directory for as long as it takes to bind it.
	const flags = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC
	if err := unix.Mount("tmpfs", p.Scratch, "tmpfs", flags, "size=4k,mode=0700"); err != nil {
		return fmt.Errorf("cannot hide the credential stores: %w", err)
	}
	empty := filepath.Join(p.Scratch, "empty")
	if err := os.WriteFile(empty, nil, 0); err != nil {
		return fmt.Errorf("cannot hide the credential stores: %w", err)
	}
	for _, h := range paths {
		info, err := os.Stat(h)
		if err != nil {
			continue
		}
		if info.IsDir() {
			err = unix.Mount("tmpfs", h, "tmpfs", flags|unix.MS_RDONLY, "size=4k,mode=0")
		} else if err = unix.Mount(empty, h, "", unix.MS_BIND, ""); err == nil {
			err = unix.MountSetattr(unix.AT_FDCWD, h, 0, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOEXEC})
		}
		if err != nil {
			return fmt.Errorf("cannot hide %s: %w", h, err)
		}
	}
	if err := unix.Unmount(p.Scratch, unix.MNT_DETACH); err != nil {
		return fmt.Errorf("cannot hide the credential stores: %w", err)
	}
	return nil
}

// ownDevices gives the sandbox terminals and shared memory of its own: the
// person's terminals (/dev/pts/N) are not there to read or type into, and
// no host process's POSIX shared memory either.
func ownDevices() error {
	if _, err := os.Stat("/dev/pts"); err == nil {
		err := unix.Mount("devpts", "/dev/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620")
		if err == nil {
			if info, lerr := os.Lstat("/dev/ptmx"); lerr == nil && info.Mode()&os.ModeSymlink == 0 {
				err = unix.Mount("/dev/pts/ptmx", "/dev/ptmx", "", unix.MS_BIND, "")
			}
		} else {
			// No new instance here: no terminals at all, then.
			err = unix.Mount("tmpfs", "/dev/pts", "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC|unix.MS_NODEV|unix.MS_RDONLY, "size=4k,mode=0755")
		}
		if err != nil {
			return fmt.Errorf("cannot give the sandbox terminals of its own: %w", err)
		}
	}
	if _, err := os.Stat("/dev/shm"); err == nil {
		if err := unix.Mount("tmpfs", "/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size=64m,mode=1777"); err != nil {
			return fmt.Errorf("cannot give the sandbox shared memory of its own: %w", err)
		}
	}
	return nil
}

// kernelAtLeast reports whether the running kernel is major.minor or later.
func kernelAtLeast(major, minor int) bool {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return false
	}
	var ma, mi int
	if _, err := fmt.Sscanf(unix.ByteSliceToString(u.Release[:]), "%d.%d", &ma, &mi); err != nil {
		return false
	}
	return ma > major || ma == major && mi >= minor
}
