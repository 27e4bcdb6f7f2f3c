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
//
// make test runs the package as two processes side by side (the
// Makefile's E2E_DOORS): the tests of the call doors and the cluster, which
// take fixed port ranges (sip.rtp_ports, webrtc.udp_ports) or drive baresip
// and Chromium, in one, every other test in the other. A new test that
// takes a fixed port range, or drives baresip or Chromium, is named to
// match E2E_DOORS (TestSIP..., TestWHIP..., TestCluster..., or added to the
// list); a test outside this package may not match it (internal/archtest).
// More processes were tried on a slow 2-core box (2026-11-30): its load
// went to 6-16 and tests that bound a wait failed.
package e2e
