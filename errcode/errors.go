package errcode

// The contract's error kinds, grouped by status. Each comment says when a
// kind is returned; every door maps it to the status shown.
var (
	// ErrInvalid is returned for a malformed request; a *ValidationError
	// carries its problems (400 with validation_errors).
	ErrInvalid = &Kind{text: "errcode: invalid request", status: 400, message: "invalid request", shown: true}
	// ErrUnauthorized is returned for a missing, unknown, revoked or
	// expired API key or session token (401).
	ErrUnauthorized = &Kind{text: "errcode: unauthorized", status: 401, message: "missing or invalid API key (x-service-key)", shown: true}
	// ErrNotOwner is returned when a job or file belongs to another
	// account (401).
	ErrNotOwner = &Kind{text: "errcode: not the owner", status: 401, message: "no permission to this resource", shown: true}
	// ErrInvalidID is returned for an id that cannot be one of ours (403).
	ErrInvalidID = &Kind{text: "errcode: invalid id", status: 403, message: "invalid id", shown: true}
	// ErrNotAdmin is returned when a valid key that is not an admin key
	// calls /admin/... (403).
	ErrNotAdmin = &Kind{text: "errcode: admin key required", status: 403, message: "admin key required", shown: true}
	// ErrScope is returned when a valid key lacks the scope a request
	// needs (403); an *Error of it names the scope.
	ErrScope = &Kind{text: "errcode: key lacks scope", status: 403, message: "API key lacks the scope this request needs", shown: true}
	// ErrNotFound is returned when a job, file, session or resource does
	// not exist or was deleted (404).
	ErrNotFound = &Kind{text: "errcode: not found", status: 404, message: "not found", shown: true}
	// ErrNotAcceptable is returned when an offer has no media the session
	// takes (406, WHIP).
	ErrNotAcceptable = &Kind{text: "errcode: not acceptable", status: 406, message: "no acceptable media", shown: true}
	// ErrBodyTimeout is returned when a request body stops arriving before
	// its read timeout (408).
	ErrBodyTimeout = &Kind{text: "errcode: request body timed out", status: 408, message: "request body not received in time", shown: true}
	// ErrConflict is returned when a resource is already in the state the
	// request would create (409, a second WHIP peer).
	ErrConflict = &Kind{text: "errcode: conflict", status: 409, message: "conflict", shown: true}
	// ErrTooLarge is returned when a body, file, frame or audio exceeds
	// its limit (413).
	ErrTooLarge = &Kind{text: "errcode: too large", status: 413, message: "request too large", shown: true}
	// ErrCannotServe is returned for a well-formed request the appliance
	// cannot serve: a language no engine has, model-3 on live (422).
	ErrCannotServe = &Kind{text: "errcode: cannot serve", status: 422, message: "request cannot be served", shown: true}
	// ErrBadAudio is returned when audio cannot be read (422).
	ErrBadAudio = &Kind{text: "errcode: unreadable audio", status: 422, message: "audio: not a readable audio file", shown: true}
	// ErrFetch is returned when an audio_url cannot be fetched (422).
	ErrFetch = &Kind{text: "errcode: audio_url fetch failed", status: 422, message: "audio_url: fetch failed", shown: true}
	// ErrRateLimited is returned when a key is over its request rate (429
	// with Retry-After).
	ErrRateLimited = &Kind{text: "errcode: rate limit exceeded", status: 429, message: "too many requests for this API key, retry later", shown: true}
	// ErrInternal is returned for a failure of the appliance itself (500):
	// the client sees "internal error", the cause goes to the log. Any
	// error of no kind is taken as one.
	ErrInternal = &Kind{text: "errcode: internal error", status: 500, message: "internal error"}
	// ErrEngineFailed is returned when a remote engine answers something
	// that is not a transcription (500, naming the engine).
	ErrEngineFailed = &Kind{text: "errcode: engine failed", status: 500, message: "transcription engine failed", shown: true}
	// ErrIntegrity is returned when sealed stored data (encryption at rest)
	// fails its authentication: tampered, truncated or under a data key
	// that is gone (500, naming integrity; never the data).
	ErrIntegrity = &Kind{text: "errcode: integrity check failed", status: 500, message: "stored data failed its integrity check", shown: true}
	// ErrAtCapacity is returned when a bounded queue, pool or the live
	// session capacity is full (503).
	ErrAtCapacity = &Kind{text: "errcode: at capacity", status: 503, message: "service at capacity, try again later"}
	// ErrEngineUnavailable is returned when a remote engine cannot be
	// reached, times out or keeps failing (503, naming the engine).
	ErrEngineUnavailable = &Kind{text: "errcode: engine unavailable", status: 503, message: "transcription engine unavailable", shown: true}
	// ErrUnavailable is returned when something the request needs is
	// out of reach for now, the shared store (PostgreSQL) of a cluster
	// above all (503); the request may be retried.
	ErrUnavailable = &Kind{text: "errcode: unavailable", status: 503, message: "service temporarily unavailable, try again later"}
	// ErrShuttingDown is returned when the service is stopping (503).
	ErrShuttingDown = &Kind{text: "errcode: shutting down", status: 503, message: "shutting down"}
	// ErrNoSpace is returned when the data directory is full (507).
	ErrNoSpace = &Kind{text: "errcode: no space left", status: 507, message: "insufficient storage on the appliance"}
	// ErrQuota is returned when an upload or fetched audio_url would take
	// an account past limits.max_account_bytes. Like a full disk it is 507
	// Insufficient Storage (RFC 4918 11.5; RFC 4331 section 6 uses it for a
	// quota), but its message, unlike a full disk's, is shown.
	ErrQuota = &Kind{text: "errcode: account storage quota exceeded", status: 507, message: "storage quota of this account exceeded", shown: true}
)

// ErrLiveQuota is returned when an account already has the live sessions
// live.max_sessions_per_account allows (429). It is derived from
// ErrAtCapacity, but ingest.ErrAtCapacity is not found through it: the SIP
// door maps it on its own, to 503 with Retry-After as for a full node.
var ErrLiveQuota = &Kind{text: "errcode: account live session quota reached", status: 429,
	message: "too many live sessions open for this account", shown: true, parent: ErrAtCapacity}
