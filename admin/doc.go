// Package admin is the admin socket: an owner-only unix socket in the data
// directory (Socket) through which `earshotd keys` and `earshotd backup`
// reach the running daemon that holds the store, one JSON request and one
// JSON answer per connection. Do carries out a request on an open store,
// so the CLI runs the same operations itself when no daemon runs.
//
// It does not own the keys (package store) nor decide which keys are admin
// keys (store.Key.Admin); the daemon binds the socket (Listen) and runs the
// Server until its context ends.
//
// Invariants: only the data directory's owner can connect (the socket is
// 0600); a backup is written only into the data directory itself, as
// backup-*.db (backup.go), never over the database or a blob.
package admin
