// Package daemon wires earshot together and owns its lifecycle: configuration,
// the job service that every door calls (create, read, list and delete jobs,
// uploads), the durable pre-recorded worker pool and its staged shutdown;
// it runs the live sessions of package daemon/live, which it builds on its
// store, pipeline and blob files (live.go), and the modules beside them:
// the callback outbox (package callback), audio_url downloads (package
// ingest/fetch) and retention (package retention).
//
// Recognition itself (engines, routing, fallback, transcription, add-ons,
// the result object) is package recognizer/pipeline, which the daemon loads
// from its config (Config.Pipeline) and calls; the pipeline never imports
// the daemon.
//
// Invariant: a job or upload is committed to the store before any caller sees
// success. The daemon does not import the api package; cmd/earshotd joins them.
package daemon
