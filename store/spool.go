package store

import "io"

// SpoolFile is a local file a store that seals writes sealed as it grows
// (a running live session's recording, daemon/live): read and changed in
// place through it, clear bytes only in memory.
type SpoolFile interface {
	io.Writer
	io.ReaderAt
	io.WriterAt
	io.ReadSeeker
	Sync() error
	Close() error
	Name() string
}

// Sealer is the capability of a store that seals what it keeps
// (store/sealed), which Store.Sealer returns (nil on a store that keeps
// content in clear): besides the records and blobs it seals, local files
// written as they grow are sealed spools. CreateSpool creates (truncating)
// the spool at path under a new data key, OpenSpool opens it, RemoveSpool
// removes it and destroys its key. SweepSpools destroys the keys of
// spools no longer in dir (returning their names), before any spool is
// created there.
type Sealer interface {
	CreateSpool(path string) (SpoolFile, error)
	OpenSpool(path string) (SpoolFile, error)
	RemoveSpool(path string) error
	SweepSpools(dir string) ([]string, error)
}
