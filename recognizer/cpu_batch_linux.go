package recognizer

import (
	"runtime"
	"syscall"
)

// lowerThreadPriority locks the calling goroutine to its thread, never to
// be unlocked (the runtime ends the thread with the goroutine), and sets
// that thread's niceness (Linux threads have their own). A failure leaves
// the thread as it was.
func lowerThreadPriority(nice int) {
	runtime.LockOSThread()
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), nice)
}
