//go:build linux && (amd64 || arm64)

package sandbox

import "golang.org/x/sys/unix"

// allowed are the system calls a build makes (compilers, linkers, make,
// go, git, sh, python, node and their tests) on every architecture the
// filter knows; archAllowed adds an architecture's older forms. Any other
// call fails with ENOSYS, as on a kernel without it, which programs take
// as a reason to fall back. Some allowed calls are narrowed first: modes,
// namespaces, ptrace, ioctl, sockets. Left out on purpose, besides
// refused: kernel modules, kexec, reboot, swap, quotas, the clock, BPF
// and perf, io_uring, fanotify, handles (open_by_handle_at), keyrings,
// mounts, setns, process_vm_*, pidfd_getfd, kcmp, personality's and
// lookup_dcookie's oddities, userfaultfd, vhangup, acct and the like.
var allowed = []uint32{
	// Files and directories.
	unix.SYS_READ, unix.SYS_WRITE, unix.SYS_READV, unix.SYS_WRITEV, unix.SYS_PREAD64, unix.SYS_PWRITE64,
	unix.SYS_PREADV, unix.SYS_PWRITEV, unix.SYS_PREADV2, unix.SYS_PWRITEV2, unix.SYS_LSEEK,
	unix.SYS_OPENAT, unix.SYS_OPENAT2, unix.SYS_CLOSE, unix.SYS_CLOSE_RANGE, unix.SYS_NEWFSTATAT, unix.SYS_FSTAT,
	unix.SYS_STATX, unix.SYS_STATFS, unix.SYS_FSTATFS, unix.SYS_FACCESSAT, unix.SYS_FACCESSAT2,
	unix.SYS_GETDENTS64, unix.SYS_GETCWD, unix.SYS_CHDIR, unix.SYS_FCHDIR, unix.SYS_MKDIRAT, unix.SYS_MKNODAT,
	unix.SYS_UNLINKAT, unix.SYS_RENAMEAT, unix.SYS_RENAMEAT2, unix.SYS_LINKAT, unix.SYS_SYMLINKAT,
	unix.SYS_READLINKAT, unix.SYS_FCHMOD, unix.SYS_FCHMODAT, unix.SYS_FCHMODAT2, unix.SYS_FCHOWN, unix.SYS_FCHOWNAT,
	unix.SYS_UTIMENSAT, unix.SYS_TRUNCATE, unix.SYS_FTRUNCATE, unix.SYS_FALLOCATE, unix.SYS_FADVISE64,
	unix.SYS_READAHEAD, unix.SYS_FSYNC, unix.SYS_FDATASYNC, unix.SYS_SYNC, unix.SYS_SYNCFS, unix.SYS_SYNC_FILE_RANGE,
	unix.SYS_FLOCK, unix.SYS_FCNTL, unix.SYS_DUP, unix.SYS_DUP3, unix.SYS_PIPE2, unix.SYS_IOCTL, unix.SYS_UMASK,
	unix.SYS_SENDFILE, unix.SYS_COPY_FILE_RANGE, unix.SYS_SPLICE, unix.SYS_TEE, unix.SYS_VMSPLICE,
	unix.SYS_GETXATTR, unix.SYS_LGETXATTR, unix.SYS_FGETXATTR, unix.SYS_LISTXATTR, unix.SYS_LLISTXATTR,
	unix.SYS_FLISTXATTR, unix.SYS_SETXATTR, unix.SYS_LSETXATTR, unix.SYS_FSETXATTR, unix.SYS_REMOVEXATTR,
	unix.SYS_LREMOVEXATTR, unix.SYS_FREMOVEXATTR, unix.SYS_INOTIFY_INIT1, unix.SYS_INOTIFY_ADD_WATCH,
	unix.SYS_INOTIFY_RM_WATCH, unix.SYS_MEMFD_CREATE, unix.SYS_IO_SETUP, unix.SYS_IO_DESTROY, unix.SYS_IO_SUBMIT,
	unix.SYS_IO_CANCEL, unix.SYS_IO_GETEVENTS, unix.SYS_IO_PGETEVENTS,
	// Waiting and events.
	unix.SYS_PPOLL, unix.SYS_PSELECT6, unix.SYS_EPOLL_CREATE1, unix.SYS_EPOLL_CTL, unix.SYS_EPOLL_PWAIT,
	unix.SYS_EPOLL_PWAIT2, unix.SYS_EVENTFD2, unix.SYS_SIGNALFD4, unix.SYS_TIMERFD_CREATE, unix.SYS_TIMERFD_SETTIME,
	unix.SYS_TIMERFD_GETTIME, unix.SYS_FUTEX, unix.SYS_FUTEX_WAITV, unix.SYS_FUTEX_WAKE, unix.SYS_FUTEX_WAIT,
	unix.SYS_FUTEX_REQUEUE, unix.SYS_SET_ROBUST_LIST, unix.SYS_GET_ROBUST_LIST, unix.SYS_NANOSLEEP,
	unix.SYS_CLOCK_NANOSLEEP, unix.SYS_CLOCK_GETTIME, unix.SYS_CLOCK_GETRES, unix.SYS_GETTIMEOFDAY,
	unix.SYS_GETITIMER, unix.SYS_SETITIMER, unix.SYS_TIMER_CREATE, unix.SYS_TIMER_SETTIME, unix.SYS_TIMER_GETTIME,
	unix.SYS_TIMER_GETOVERRUN, unix.SYS_TIMER_DELETE, unix.SYS_TIMES,
	// Memory.
	unix.SYS_BRK, unix.SYS_MMAP, unix.SYS_MUNMAP, unix.SYS_MREMAP, unix.SYS_MPROTECT, unix.SYS_MADVISE,
	unix.SYS_MSYNC, unix.SYS_MINCORE, unix.SYS_MLOCK, unix.SYS_MLOCK2, unix.SYS_MUNLOCK, unix.SYS_MLOCKALL,
	unix.SYS_MUNLOCKALL, unix.SYS_MEMBARRIER, unix.SYS_MBIND, unix.SYS_GET_MEMPOLICY, unix.SYS_SET_MEMPOLICY,
	unix.SYS_PKEY_ALLOC, unix.SYS_PKEY_FREE, unix.SYS_PKEY_MPROTECT, unix.SYS_MAP_SHADOW_STACK, unix.SYS_MSEAL,
	unix.SYS_REMAP_FILE_PAGES,
	// Processes, threads and signals.
	unix.SYS_CLONE, unix.SYS_CLONE3, unix.SYS_EXECVE, unix.SYS_EXECVEAT, unix.SYS_EXIT, unix.SYS_EXIT_GROUP,
	unix.SYS_WAIT4, unix.SYS_WAITID, unix.SYS_KILL, unix.SYS_TKILL, unix.SYS_TGKILL, unix.SYS_PIDFD_OPEN,
	unix.SYS_PIDFD_SEND_SIGNAL, unix.SYS_RT_SIGACTION, unix.SYS_RT_SIGPROCMASK, unix.SYS_RT_SIGRETURN,
	unix.SYS_RT_SIGPENDING, unix.SYS_RT_SIGTIMEDWAIT, unix.SYS_RT_SIGQUEUEINFO, unix.SYS_RT_TGSIGQUEUEINFO,
	unix.SYS_RT_SIGSUSPEND, unix.SYS_SIGALTSTACK, unix.SYS_RESTART_SYSCALL, unix.SYS_SET_TID_ADDRESS,
	unix.SYS_RSEQ, unix.SYS_UNSHARE, unix.SYS_PTRACE, unix.SYS_PRCTL, unix.SYS_SECCOMP,
	unix.SYS_LANDLOCK_CREATE_RULESET, unix.SYS_LANDLOCK_ADD_RULE, unix.SYS_LANDLOCK_RESTRICT_SELF,
	unix.SYS_GETPID, unix.SYS_GETPPID, unix.SYS_GETTID, unix.SYS_GETPGID, unix.SYS_SETPGID, unix.SYS_GETSID,
	unix.SYS_SETSID, unix.SYS_GETUID, unix.SYS_GETEUID, unix.SYS_GETGID, unix.SYS_GETEGID, unix.SYS_GETRESUID,
	unix.SYS_GETRESGID, unix.SYS_GETGROUPS, unix.SYS_SETUID, unix.SYS_SETGID, unix.SYS_SETREUID, unix.SYS_SETREGID,
	unix.SYS_SETRESUID, unix.SYS_SETRESGID, unix.SYS_SETFSUID, unix.SYS_SETFSGID, unix.SYS_SETGROUPS,
	unix.SYS_CAPGET, unix.SYS_CAPSET, unix.SYS_GETRLIMIT, unix.SYS_SETRLIMIT, unix.SYS_PRLIMIT64,
	unix.SYS_GETRUSAGE, unix.SYS_GETPRIORITY, unix.SYS_SETPRIORITY, unix.SYS_IOPRIO_GET, unix.SYS_IOPRIO_SET,
	unix.SYS_SCHED_YIELD, unix.SYS_SCHED_GETAFFINITY, unix.SYS_SCHED_SETAFFINITY, unix.SYS_SCHED_GETPARAM,
	unix.SYS_SCHED_SETPARAM, unix.SYS_SCHED_GETSCHEDULER, unix.SYS_SCHED_SETSCHEDULER, unix.SYS_SCHED_GETATTR,
	unix.SYS_SCHED_SETATTR, unix.SYS_SCHED_GET_PRIORITY_MAX, unix.SYS_SCHED_GET_PRIORITY_MIN,
	unix.SYS_SCHED_RR_GET_INTERVAL, unix.SYS_GETCPU, unix.SYS_UNAME, unix.SYS_SYSINFO, unix.SYS_GETRANDOM,
	unix.SYS_PERSONALITY,
	// System V and POSIX IPC, in the sandbox's own IPC namespace.
	unix.SYS_SHMGET, unix.SYS_SHMAT, unix.SYS_SHMDT, unix.SYS_SHMCTL, unix.SYS_SEMGET, unix.SYS_SEMOP,
	unix.SYS_SEMTIMEDOP, unix.SYS_SEMCTL, unix.SYS_MSGGET, unix.SYS_MSGSND, unix.SYS_MSGRCV, unix.SYS_MSGCTL,
	unix.SYS_MQ_OPEN, unix.SYS_MQ_UNLINK, unix.SYS_MQ_TIMEDSEND, unix.SYS_MQ_TIMEDRECEIVE, unix.SYS_MQ_NOTIFY,
	unix.SYS_MQ_GETSETATTR,
	// Sockets, their families and types narrowed below.
	unix.SYS_SOCKET, unix.SYS_SOCKETPAIR, unix.SYS_BIND, unix.SYS_LISTEN, unix.SYS_ACCEPT, unix.SYS_ACCEPT4,
	unix.SYS_CONNECT, unix.SYS_GETSOCKNAME, unix.SYS_GETPEERNAME, unix.SYS_GETSOCKOPT, unix.SYS_SETSOCKOPT,
	unix.SYS_SENDTO, unix.SYS_RECVFROM, unix.SYS_SENDMSG, unix.SYS_RECVMSG, unix.SYS_SENDMMSG, unix.SYS_RECVMMSG,
	unix.SYS_SHUTDOWN,
}
