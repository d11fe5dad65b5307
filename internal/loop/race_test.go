//go:build race

package loop_test

// The race detector slows code unevenly, so timing tests skip under it.
func init() { raceEnabled = true }
