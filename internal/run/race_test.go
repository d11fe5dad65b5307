//go:build race

package run

// The race detector moves more values to the heap, so allocation bounds
// are looser under it.
func init() { raceEnabled = true }
