// Package metrics builds the appliance's Prometheus registry: one of its
// own (no global state), holding the Go runtime and process collectors and
// the gauges read from the appliance's state at each scrape (jobs by kind
// and status, queue depth, live sessions, decoders, callback outbox, batch
// passes). The API serves it at /metrics.
//
// It records nothing itself: the job service adds its counters (jobs
// finished, real-time factor: daemon/metrics.go), the modules theirs
// (callback, recognizer/pipeline, daemon/live), cmd/earshotd the SIP door's.
package metrics
