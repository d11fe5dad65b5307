//go:build linux && !amd64 && !arm64

package sandbox

// The filter names its calls by number for amd64 and arm64 only; elsewhere
// the seccomp layer reports that it cannot be loaded.
const (
	filterArch = 0
	x32Bit     = 0
)

var legacyCalls []legacyCall

var allowed, archAllowed []uint32
