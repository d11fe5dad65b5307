package sandbox

import "golang.org/x/sys/unix"

// filterArch is the ABI the filter allows; x32Bit marks the calls of
// x86-64's x32 ABI, which it refuses.
const (
	filterArch = unix.AUDIT_ARCH_X86_64
	x32Bit     = 0x40000000
)

var legacyCalls = []legacyCall{
	{nr: unix.SYS_CHMOD, chmod: true},
	{nr: unix.SYS_CHOWN}, {nr: unix.SYS_LCHOWN},
}

// archAllowed are x86-64's older forms of allowed calls.
var archAllowed = []uint32{
	unix.SYS_OPEN, unix.SYS_CREAT, unix.SYS_STAT, unix.SYS_LSTAT, unix.SYS_ACCESS, unix.SYS_MKDIR, unix.SYS_RMDIR,
	unix.SYS_UNLINK, unix.SYS_RENAME, unix.SYS_LINK, unix.SYS_SYMLINK, unix.SYS_READLINK, unix.SYS_CHMOD,
	unix.SYS_CHOWN, unix.SYS_LCHOWN, unix.SYS_MKNOD, unix.SYS_UTIME, unix.SYS_UTIMES, unix.SYS_FUTIMESAT,
	unix.SYS_GETDENTS, unix.SYS_DUP2, unix.SYS_PIPE, unix.SYS_POLL, unix.SYS_SELECT, unix.SYS_EPOLL_CREATE,
	unix.SYS_EPOLL_WAIT, unix.SYS_EVENTFD, unix.SYS_SIGNALFD, unix.SYS_INOTIFY_INIT, unix.SYS_FORK, unix.SYS_VFORK,
	unix.SYS_PAUSE, unix.SYS_ALARM, unix.SYS_TIME, unix.SYS_GETPGRP, unix.SYS_ARCH_PRCTL, unix.SYS_URETPROBE,
}
