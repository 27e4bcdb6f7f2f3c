// Package memstore is an in-memory store.Store for the unit tests of the
// packages that hold one (daemon, daemon/live): every record lives in maps
// behind one mutex, every blob in a byte slice, so a test needs no data
// directory, no database and no fsync.
//
// It is a test helper, never a backend: nothing the daemon runs may import
// it (internal/archtest, outsideLayers). It passes the conformance suite of
// store/storetest (memstore_test.go), so a test that passes on it relies
// only on what both real backends promise. What it does not model: records
// that do not decode whole (quarantine.go of the embedded store: a test
// cannot write one through the interface), a full disk (ErrNoSpace), and
// the cross-process claims of a shared backend (one process holds it).
//
// Fault, a hook on every call, lets a test make the store fail as a real
// one does (ErrUnavailable while the database restarts, ErrNoSpace).
package memstore
