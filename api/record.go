package api

import (
	"encoding/json"
	"time"

	"github.com/earshot-dev/earshot/store"
)

// jobRecord is the contract's job record (SPEC.md 2.1); every field is
// always present, null where the contract allows.
type jobRecord struct {
	ID                  string          `json:"id"`
	RequestID           string          `json:"request_id"`
	Version             int             `json:"version"`
	Status              store.Status    `json:"status"`
	CreatedAt           string          `json:"created_at"`
	CompletedAt         *string         `json:"completed_at"`
	CustomMetadata      map[string]any  `json:"custom_metadata"`
	ErrorCode           *int            `json:"error_code"`
	PostSessionMetadata map[string]any  `json:"post_session_metadata"`
	Kind                store.Kind      `json:"kind"`
	File                *fileRecord     `json:"file"`
	RequestParams       json.RawMessage `json:"request_params"`
	Result              json.RawMessage `json:"result"`
}

// fileRecord is SPEC.md 2.2: all five fields always present.
type fileRecord struct {
	ID               string   `json:"id"`
	Filename         *string  `json:"filename"`
	Source           *string  `json:"source"`
	AudioDuration    *float64 `json:"audio_duration"`
	NumberOfChannels *int     `json:"number_of_channels"`
}

var jsonNull = json.RawMessage("null")

func newJobRecord(j *store.Job) jobRecord {
	r := jobRecord{
		ID:                  j.ID,
		RequestID:           j.RequestID,
		Version:             2,
		Status:              j.Status,
		CreatedAt:           j.CreatedAt.UTC().Format(timeFormat),
		CustomMetadata:      j.CustomMetadata,
		PostSessionMetadata: j.PostSessionMetadata,
		Kind:                j.Kind,
		RequestParams:       j.Params,
		Result:              jsonNull,
	}
	if r.PostSessionMetadata == nil {
		r.PostSessionMetadata = map[string]any{}
	}
	if len(r.RequestParams) == 0 {
		r.RequestParams = jsonNull
	}
	if !j.CompletedAt.IsZero() {
		s := j.CompletedAt.UTC().Format(timeFormat)
		r.CompletedAt = &s
	}
	if j.Status == store.StatusError && j.ErrorCode != 0 {
		c := j.ErrorCode
		r.ErrorCode = &c
	}
	if j.Status == store.StatusDone && len(j.Result) > 0 {
		r.Result = j.Result
	}
	if f := j.File; f != nil {
		r.File = &fileRecord{ID: f.ID, Filename: f.Filename, Source: f.Source, AudioDuration: f.AudioDuration, NumberOfChannels: f.Channels}
	}
	return r
}

// formatTime is for times outside records.
func formatTime(t time.Time) string { return t.UTC().Format(timeFormat) }
