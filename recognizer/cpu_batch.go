package recognizer

// batchNice is the niceness of the threads that decode batch passes
// (CPU.BatchDecode): the kernel then gives a CPU to a live decode that
// becomes runnable (weight 1024 against 110) instead of sharing it with
// a pass, and the pass takes what CPU the live decodes leave.
const batchNice = 10

// BatchDecode runs f, one decode of a live session's batch pass, on a
// thread of its own at a lower scheduling priority (batchNice) than the
// process's other threads, so that the pass's decoder, which the batch
// rule lets run beside live calls (BatchAcquire), does not delay their
// finals. The thread ends with f, its priority with it: an unprivileged
// process could not raise it back. A panic in f is raised again in the
// caller. Where threads have no priority of their own (not Linux), f runs
// as it is. Nil-safe.
func (c *CPU) BatchDecode(f func()) {
	done := make(chan any, 1)
	go func() {
		lowerThreadPriority(batchNice) // locks the goroutine to its thread for good
		defer func() { done <- recover() }()
		f()
	}()
	if p := <-done; p != nil {
		panic(p)
	}
}
