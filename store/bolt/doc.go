// Package bolt is the embedded store.Store of one box: accounts and API
// keys, jobs with their list indexes and the pre-recorded work queue,
// uploads, the callback outbox, and the audio blob files those records
// name, in one directory.
//
// Everything lives in one directory: earshot.db (a bbolt file holding JSON
// records in buckets) and blobs/ (one file per audio blob). The package owns
// the schema, its migrations, its indexes and crash recovery; it knows
// nothing of HTTP, recognition or the contract's JSON shapes beyond the File
// record.
//
// Records are JSON, except that a job record frames its Params and Result
// as raw bytes after a small JSON head, so reading a job (the hottest path)
// parses only the head. Schema changes go through the migrations in db.go,
// run in order in Open inside one transaction.
//
// Invariants:
//   - Every method that writes returns only after its bbolt transaction has
//     committed (and, unless Options.NoSync, been fsynced), so a 2xx answered
//     after a store call means the change is on disk.
//   - A job's list index, status index, status counters and queue membership
//     are written in the same transaction as the job record; Check verifies
//     that they agree.
//   - A pre-recorded job is in the queue exactly while its status is queued.
//   - A blob appears under its name only once it is complete and fsynced
//     (written to a temporary file, then renamed).
//   - A blob is written before the record that names it and removed after
//     the record stops naming it, so a crash leaves at most a blob no
//     record names; SweepBlobs, run at start, removes those.
//
// store.Store is the contract the daemon holds: DB is its embedded
// implementation (its Cluster capability is nil), store/postgres its
// shared one for a cluster of nodes, and store/storetest runs one
// conformance suite against both. The record rules (Job.Validate,
// store.ApplyUpdate) are the contract's, so both accept the same records.
//
// A DB is safe for concurrent use. bbolt serialises writers; readers run
// in parallel with them. Only one process may hold the database open: a
// second Open waits Options.Timeout and then returns ErrLocked.
package bolt
