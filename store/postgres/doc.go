// Package postgres is earshot's shared store: the store.Store contract kept
// in PostgreSQL, so that several earshot nodes act as one service (cluster
// mode, store.backend: postgres). It holds everything the embedded store
// holds: accounts and keys, jobs of both kinds with their list indexes,
// uploads, the pre-recorded queue, the callback outbox, live-session state
// and the audio itself, in 256 KiB chunks streamed both ways.
//
// The schema is versioned: migrations/NNNN_*.sql are embedded and applied
// in order by Open, in one transaction under an advisory lock (so nodes
// starting together migrate once); schema_version records the version, and
// a database written by a newer earshot is refused (store.ErrSchemaTooNew).
//
// Invariants:
//   - Every method that writes returns only after its transaction has
//     committed, so a 2xx answered after a store call means the change is
//     in the database every node reads.
//   - A job's columns (status, queued, blob...) and its JSON head are
//     written together; a pre-recorded job is queued exactly while its
//     status is queued and its audio is stored (Check verifies both).
//   - ClaimNext and ClaimDeliveries take rows with SELECT ... FOR UPDATE SKIP
//     LOCKED, so concurrent nodes never claim the same job or delivery; a
//     claim records the node and a lease end.
//   - A blob is complete or absent: its chunks and its name commit in one
//     transaction. A content is deleted with its last name.
//   - Every statement runs under Options.Timeout: a database that does not
//     answer yields an error wrapping store.ErrUnavailable, never a hang.
//
// A DB is safe for concurrent use by any number of goroutines and nodes.
package postgres
