// Package errcode declares the contract's errors once: each Kind carries the
// HTTP status every door answers for it (SPEC.md §7, PROTOCOL.md) and the
// message a client is shown. The job service returns these kinds (or a lower
// package's own sentinel derived from one with Kind.Sub), the HTTP door maps
// any error to its status and body with Status and Message, and the daemon
// uses the same two functions for a failed job's error_code.
//
// It is a leaf: it imports only the standard library, so store, ingest,
// recognizer, params, the daemon and api can all depend on it.
//
// Invariant: no code here or elsewhere looks at an error's text to learn
// its kind; Status and Message use errors.As and errors.Is only.
package errcode
