package sandbox

import "golang.org/x/sys/unix"

// filterArch is the ABI the filter allows; arm64 has no second one.
const (
	filterArch = unix.AUDIT_ARCH_AARCH64
	x32Bit     = 0
)

// legacyCalls: arm64 has only the *at forms.
var legacyCalls []legacyCall

// archAllowed: arm64 has only the newer forms.
var archAllowed []uint32
