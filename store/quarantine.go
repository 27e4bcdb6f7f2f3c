package store

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// A job record whose head does not decode whole (written by an older
// version, or by a bug yet unknown) must not stop the box: not the worker
// that claims it, not the lists that show it, not the next start. Such a
// record is salvaged field by field and quarantined: the fields that do not
// decode are dropped and named in post_session_metadata.unreadable_fields,
// and a job still to run or running ends error (500), so it never reaches
// a worker. Other jobs go on. Only a head that is not a JSON object, or
// whose id, account, kind, status or created_at is unreadable, is
// ErrCorrupt (Check reports it; the queue drops its entry).

// unreadableField is the post_session_metadata key naming the dropped fields.
const unreadableField = "unreadable_fields"

// required are the head fields without which a record cannot be placed.
var required = []string{"id", "account", "kind", "status", "created_at"}

// DecodeJobHead decodes a job record's JSON head (the Job without Params
// and Result) into j, salvaging it field by field when it does not decode
// whole: then j.Unreadable names the dropped fields.
func DecodeJobHead(head []byte, j *Job) error {
	err := json.Unmarshal(head, j)
	if err == nil {
		return nil
	}
	var fields map[string]json.RawMessage
	if ferr := json.Unmarshal(head, &fields); ferr != nil {
		return fmt.Errorf("job record: %v: %w", err, ErrCorrupt)
	}
	*j = Job{}
	var dropped []string
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		one, merr := json.Marshal(map[string]json.RawMessage{k: fields[k]})
		var probe Job
		if merr != nil || json.Unmarshal(one, &probe) != nil {
			dropped = append(dropped, k)
			continue
		}
		if uerr := json.Unmarshal(one, j); uerr != nil { // cannot fail: probe took it
			dropped = append(dropped, k)
		}
	}
	for _, k := range dropped {
		if slices.Contains(required, k) {
			return fmt.Errorf("job record: %s unreadable: %v: %w", k, err, ErrCorrupt)
		}
	}
	if verr := j.validate(); verr != nil || len(dropped) == 0 {
		return fmt.Errorf("job record: %v: %w", err, ErrCorrupt)
	}
	j.unreadable = dropped
	return nil
}

// Unreadable names the fields of j's stored record that could not be
// decoded and were dropped; nil when the record decoded whole.
func (j *Job) Unreadable() []string { return j.unreadable }

// Quarantined returns j, read from a record with unreadable fields, as it
// is kept from now on (see above): the fields dropped and named, a job
// queued or processing ended error at now, no batch pass or fetch pending.
// The copy's WasQuarantined is true until it is written back.
func (j *Job) Quarantined(now time.Time) *Job {
	c := j.clone()
	c.unreadable, c.quarantined = nil, true
	if c.PostSessionMetadata == nil {
		c.PostSessionMetadata = Metadata{}
	}
	c.PostSessionMetadata[unreadableField] = slices.Clone(j.unreadable)
	c.BatchPass, c.AwaitingAudio = "", false
	if c.Status == StatusQueued || c.Status == StatusProcessing {
		c.Status = StatusError
		c.ErrorCode = 500
		c.ErrorMessage = "the job's stored record could not be read in full (" + strings.Join(j.unreadable, ", ") +
			"); it was ended"
		c.CompletedAt = now.UTC()
	}
	return c
}

// WasQuarantined reports whether j is the quarantined form of a record not
// yet written back (Quarantined): a store that meets it where it would
// run the job writes it instead.
func (j *Job) WasQuarantined() bool { return j.quarantined }

// View is j as callers see it: its quarantined form when its record had
// unreadable fields, else j.
func (j *Job) View() *Job {
	if j.unreadable == nil {
		return j
	}
	return j.Quarantined(time.Now())
}
