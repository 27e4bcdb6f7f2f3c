// Package daemon wires earshot together and owns its lifecycle: configuration,
// the job service that every door calls (create, read, list and delete jobs,
// uploads), the durable pre-recorded worker pool and the callback outbox.
//
// Invariant: a job or upload is committed to the store before any caller sees
// success. The daemon does not import the api package; cmd/earshotd joins them.
package daemon
