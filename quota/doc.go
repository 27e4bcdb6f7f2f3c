// Package quota bounds the bytes each account keeps on disk: uploads,
// fetched audio_url bodies and live recordings (limits.max_account_bytes,
// read by the daemon from its config and passed to New).
//
// Uploads and fetches are charged as they are written (Reader), so
// concurrent writes of one account cannot together pass the limit; live
// recordings count once written: a new session is refused to an account at
// its limit (Admit), but a running one is not cut. Counts come from the
// store (Counter) and are kept fresh as described at quotaRecount.
//
// It does not write the client's message: the job service wraps ErrExceeded
// into its 507 answer with the limit (daemon/errors.go).
package quota
