package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"time"
)

// Kind is a job's kind, spelled as in the contract.
type Kind string

// Kinds.
const (
	KindPreRecorded Kind = "pre-recorded"
	KindLive        Kind = "live"
)

func (k Kind) valid() bool { return k == KindPreRecorded || k == KindLive }

// Status is a job's status, spelled as in the contract.
type Status string

// Statuses.
const (
	StatusQueued     Status = "queued"
	StatusProcessing Status = "processing"
	StatusDone       Status = "done"
	StatusError      Status = "error"
)

func (s Status) valid() bool {
	return s == StatusQueued || s == StatusProcessing || s == StatusDone || s == StatusError
}

// File is the contract's File record (SPEC 2.2); its JSON is the contract's,
// with nil pointers as null.
type File struct {
	ID            string   `json:"id"`
	Filename      *string  `json:"filename"`
	Source        *string  `json:"source"`
	AudioDuration *float64 `json:"audio_duration"`
	Channels      *int     `json:"number_of_channels"`
}

// Job is a pre-recorded job or a live session. Its JSON is the store's own
// record format, not the contract's.
type Job struct {
	ID                  string          `json:"id"`
	Account             string          `json:"account"`
	KeyID               string          `json:"key_id,omitempty"` // the API key that created it ("" for a door without one)
	Kind                Kind            `json:"kind"`
	Status              Status          `json:"status"`
	RequestID           string          `json:"request_id,omitempty"`
	CreatedAt           time.Time       `json:"created_at"`
	CompletedAt         time.Time       `json:"completed_at,omitzero"` // zero until done/error
	ErrorCode           int             `json:"error_code,omitempty"`  // 0 unless error
	ErrorMessage        string          `json:"error_message,omitempty"`
	CustomMetadata      Metadata        `json:"custom_metadata"`
	Params              json.RawMessage `json:"params,omitempty"` // request_params as the contract shows them
	File                *File           `json:"file,omitempty"`
	Result              json.RawMessage `json:"result,omitempty"` // nil until done
	PostSessionMetadata Metadata        `json:"post_session_metadata"`
	Blob                string          `json:"blob,omitempty"`     // name of the blob holding this job's audio, "" if none
	Attempts            int             `json:"attempts,omitempty"` // how many times processing started
	// AwaitingAudio marks a queued pre-recorded job whose audio_url is
	// still to be fetched: it stays out of the queue until it is cleared.
	AwaitingAudio bool `json:"awaiting_audio,omitempty"`
	// BatchPass is the state of a live job's follow-up pass over its
	// recording (batchpass.go): "" none, BatchPassQueued or
	// BatchPassRunning. A job with one is in the durable queue.
	BatchPass BatchPassState `json:"batch_pass,omitempty"`
	// HeldAt is when a legal hold was put on the job (POST
	// /v2/pre-recorded/{id}/hold), zero while it has none; HeldBy is the
	// admin key that put it. A held job is never expired by retention nor
	// deleted (DeleteJob: ErrHeld) until the hold is released.
	HeldAt time.Time `json:"held_at,omitzero"`
	HeldBy string    `json:"held_by,omitempty"`

	unreadable  []string // fields of the stored record dropped as unreadable (quarantine.go)
	quarantined bool     // the quarantined form of such a record, not yet written back
}

// Held reports whether j is under a legal hold.
func (j *Job) Held() bool { return !j.HeldAt.IsZero() }

// MaxIDLen bounds job, upload and delivery ids (bbolt keys may not exceed 32 KiB).
const MaxIDLen = 256

// inQueue reports whether j belongs in the durable queue: a queued
// pre-recorded job whose audio is on disk, or a live job with a batch pass
// queued or running.
func (j *Job) inQueue() bool {
	if j.Kind == KindLive {
		return j.BatchPass != ""
	}
	return j.Kind == KindPreRecorded && j.Status == StatusQueued && !j.AwaitingAudio
}

// validate checks the fields every stored job must have.
func (j *Job) validate() error {
	switch {
	case j.ID == "" || len(j.ID) > MaxIDLen:
		return fmt.Errorf("job id %q: %w", j.ID, ErrInvalid)
	case j.Account == "":
		return fmt.Errorf("job %s: empty account: %w", j.ID, ErrInvalid)
	case !j.Kind.valid():
		return fmt.Errorf("job %s: kind %q: %w", j.ID, j.Kind, ErrInvalid)
	case !j.Status.valid():
		return fmt.Errorf("job %s: status %q: %w", j.ID, j.Status, ErrInvalid)
	case j.CreatedAt.IsZero() || j.CreatedAt.Before(minTime) || j.CreatedAt.After(maxTime):
		return fmt.Errorf("job %s: created_at %s: %w", j.ID, j.CreatedAt, ErrInvalid)
	case !j.BatchPass.valid() || j.BatchPass != "" && j.Kind != KindLive:
		return fmt.Errorf("job %s: batch_pass %q on a %s job: %w", j.ID, j.BatchPass, j.Kind, ErrInvalid)
	}
	return nil
}

// clone copies j deeply enough that changing the copy's fields, maps or
// raw JSON leaves j as it was.
func (j *Job) clone() *Job {
	c := *j
	c.CustomMetadata = maps.Clone(j.CustomMetadata)
	c.PostSessionMetadata = maps.Clone(j.PostSessionMetadata)
	c.Params = bytes.Clone(j.Params)
	c.Result = bytes.Clone(j.Result)
	if j.File != nil {
		f := *j.File
		c.File = &f
	}
	return &c
}

// UpdateFunc changes a job in an UpdateJob and returns the deliveries to
// enqueue with it.
type UpdateFunc = func(j *Job) ([]*Delivery, error)

// ApplyUpdate runs fn on a copy of old as callers see it (View) and checks
// the result against the rules every backend's UpdateJob keeps: times in
// UTC; ID, Account, Kind and CreatedAt unchanged (else ErrInvalid); the job
// valid (Validate). It returns the new job and fn's deliveries, nil ones
// dropped, each owned by the job (OwnedBy). fn's own error comes back as
// is in fnErr (the backend returns it to its caller unwrapped); a broken
// rule in err. The backend writes j and the deliveries in the transaction
// it read old in.
func ApplyUpdate(old *Job, fn UpdateFunc) (j *Job, ds []*Delivery, fnErr, err error) {
	j = old.View().Clone()
	got, fnErr := fn(j)
	if fnErr != nil {
		return nil, nil, fnErr, nil
	}
	j.CreatedAt = j.CreatedAt.UTC()
	j.CompletedAt = j.CompletedAt.UTC()
	j.HeldAt = j.HeldAt.UTC()
	if j.ID != old.ID || j.Account != old.Account || j.Kind != old.Kind || !j.CreatedAt.Equal(old.CreatedAt) {
		return nil, nil, nil, fmt.Errorf("job %s: update changed id, account, kind or created_at: %w", old.ID, ErrInvalid)
	}
	if err := j.Validate(); err != nil {
		return nil, nil, nil, err
	}
	for _, d := range got {
		if d != nil {
			d.OwnedBy(j)
			ds = append(ds, d)
		}
	}
	return j, ds, nil, nil
}
