//go:build !linux

package recognizer

// lowerThreadPriority does nothing where threads have no niceness of
// their own.
func lowerThreadPriority(int) {}
