//go:build race

package main

// The race detector moves more values to the heap, so allocation bounds
// are looser under it.
func init() { raceEnabled = true }
