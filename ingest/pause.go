package ingest

// PausedSpan is one paused interval of a live session, in seconds of the
// session's audio (post_session_metadata.paused_intervals).
type PausedSpan struct {
	Start float64 `json:"start"`
	End   float64 `json:"end"`
}

// PauseState is a live session's pause state after a pause or resume
// request (POST /v2/live/{id}/pause, /resume; the job service's
// PauseLive): whether it is paused and since when (Since: the current
// pause's start, or the last resume's time; 0 when it never paused), and
// the spans paused so far (the current one ending now).
type PauseState struct {
	ID     string       `json:"id"`
	Paused bool         `json:"paused"`
	Since  float64      `json:"since"`
	Spans  []PausedSpan `json:"paused_intervals"`
}
