// Package retention deletes finished jobs and uploads once they are older
// than the retention: section allows (Config), in bounded batches, on a
// timer (Run). It reads and deletes through the store only; a job whose
// callback is still being retried is kept by the store until the outbox is
// done with it (store.Store.ExpireJobs).
//
// It does not decide what a job is or when one ends: that is the job
// service (package daemon), which runs it.
package retention
