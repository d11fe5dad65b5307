package sandbox

// This package's tests leave layers out to show each holds alone; the
// sandbox's child, run from the test binary, accepts that only here.
func init() { layersMayBeLeftOut = true }
