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
