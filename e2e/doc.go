// Package e2e holds end-to-end tests: each builds the real earshotd binary,
// starts it on a loopback port with a temporary data dir, and speaks to it
// over real sockets with real speech from shared/testdata.
package e2e
