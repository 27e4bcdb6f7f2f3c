package store

// BatchPassState is where a live job's batch pass stands: the follow-up
// that transcribes the session's recording with the pre-recorded pipeline
// and replaces its live result. A live job with a batch pass queued or
// running stays in the durable queue (under its own kind, apart from the
// pre-recorded jobs) whatever its status, so the pass survives a restart.
type BatchPassState string

// Batch pass states ("" is none: never asked for, or finished).
const (
	BatchPassQueued  BatchPassState = "queued"
	BatchPassRunning BatchPassState = "running"
)

func (s BatchPassState) valid() bool {
	return s == "" || s == BatchPassQueued || s == BatchPassRunning
}
