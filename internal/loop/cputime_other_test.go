//go:build !linux

package loop_test

import "time"

// threadCPU falls back to wall time where no per-thread clock is wired up.
func threadCPU() time.Duration { return time.Duration(time.Now().UnixNano()) }
