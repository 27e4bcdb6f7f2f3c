// Package sealed is encryption at rest for any store.Store: a Store that
// wraps a backend (store/bolt, store/postgres) and seals what it keeps of
// content with AES-256-GCM before the backend sees it.
//
// What is sealed: a job's Params, Result, CustomMetadata,
// PostSessionMetadata and File.Filename, an upload's Filename, a callback
// delivery's Body (record.go), and every blob's bytes (blob.go, a chunked
// AEAD that streams). Ids, account, status, kind, times, error codes and
// blob names stay clear: lists, claims and the queue need them.
//
// Keys. Each job, delivery without a job and blob has its own random
// 256-bit data key (DEK), wrapped by the key-encryption key (KEK, kek.go)
// and kept in a Keyring (keyring.go) outside the backend's database: a
// file of fixed slots under data_dir (FileKeyring) that is overwritten in
// place when a key is destroyed. An upload's record is sealed under its
// blob's DEK (uploadDEK: one key, one synced keyring write per upload); a
// record written when its blob had no key has its own. Deleting a job, an
// upload or a blob (DeleteJob, DeleteUpload with RemoveBlob of its blob,
// ExpireJobs, ExpireUploads, SweepBlobs) destroys its DEK: what the
// backend still holds of it (bbolt's free pages, blob files a backup
// copied) is unreadable. A blob linked to another (LinkBlob: a job made
// from an upload) has the same key re-wrapped under its own name, so an
// upload's file name stays readable from free pages as long as such a job
// does, which holds the same audio and file name.
//
// Filters on custom_metadata (ListQuery.Metadata) are applied here after
// unsealing, with Offset and Limit counted over the matching jobs.
//
// Rotation (rotate.go) re-wraps every DEK under a new KEK while the store
// serves, one slot at a time, the new slot written and synced before the
// old one is zeroed, so a kill at any point leaves each DEK under one of
// the two keys; the keyring's header names the rotation so a restart
// resumes it.
//
// Invariants: no clear content reaches the backend once the layer is on
// (records written before it was turned on are read as they are and
// sealed at their next write); a field or blob that does not authenticate
// is store.ErrIntegrity, never bytes; no key byte reaches a log line, an
// error or the backend.
package sealed
