// Package fetch is the ingest of an audio_url: Download copies a remote
// file into a store blob, bounded in size (limits.max_upload_bytes), time
// (limits.fetch_timeout), rate (fetch.min_bytes_per_second) and the
// account's storage quota, through the deny list of fetch.deny
// (ingest/media.Fetch dials it); a Fetcher runs the downloads of queued
// jobs beside the workers, at most fetch.max_concurrent at once and
// fetch.max_per_account of one account, taking turns between accounts.
//
// A download's errors are client-facing errcode errors naming audio_url by
// class only (unreachable, refused, too large, too slow): the cause goes
// to the log, so the messages do not map the network behind the appliance.
// What a job is and when it is queued is the job service's (package
// daemon), which hands the Fetcher the work to do for each job.
package fetch
