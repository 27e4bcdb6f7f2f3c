// Package e2e holds end-to-end tests: each builds the real earshotd binary,
// starts it on a loopback port with a temporary data dir, and speaks to it
// over real sockets with real speech from shared/testdata.
//
// Tests that mostly wait (cluster failover, restarts and kills, slow
// clients, the 40-minute call) call t.Parallel: they run after the serial
// tests, a few at a time (make test passes -parallel 4), which keeps the
// package within CI's time budget. A test may do so only if it takes no
// fixed port range another parallel test uses and bounds no timing or
// accuracy that contention could move; the accuracy tests (live against
// batch, the call doors' WER) stay serial.
package e2e
