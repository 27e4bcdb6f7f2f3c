// Package pipeline is earshot's recognition pipeline: the engine registry
// (the embedded PocketSphinx engine, its live and telephone-band pools and
// the remote engines of the config), routing a request to an engine by
// model and language, the fallback from a failing remote engine to the
// embedded one, batch transcription of a file, the add-ons and the
// contract's result object (Result), built of package transcript's shapes.
//
// It reads requests as package params decodes them and answers in the
// contract's shapes (Result, transcript.Envelope), so the job service (package
// daemon) and `earshotd transcribe` run the same pipeline. It does not
// store jobs, fetch audio, deliver callbacks or hold live sessions: those
// are the daemon's. Imports point down only: pipeline imports recognizer,
// its engines and add-ons, params, transcript, errcode and ingest/media, never daemon.
//
// Invariant: an add-on's failure is reported in its envelope (or in
// post_session_metadata) and never fails the job.
package pipeline
