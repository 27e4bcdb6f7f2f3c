package callback

import (
	"encoding/json"

	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/store"
)

// Callback headers (docs/PROTOCOL.md, Callbacks).
const (
	// HeaderTimedSignature is "t=<unix seconds>,v1=<hex>" (Sign): the
	// HMAC-SHA256 of the attempt's time and the body under the account's
	// callback secret, made afresh for every attempt, so a receiver can
	// refuse an old delivery sent again (Verify).
	HeaderTimedSignature = "x-earshot-webhook-signature"
	// HeaderSignature is the hex HMAC-SHA256 of the body alone, as the
	// API family's clients verify it; it carries no time, so a captured
	// delivery still verifies when replayed. Sent unless
	// callbacks.body_signature is false.
	HeaderSignature = "x-earshot-signature"
	// HeaderDelivery is the delivery's id, the same across its retries,
	// so receivers can drop duplicates.
	HeaderDelivery = "x-earshot-delivery"
)

// Body is the JSON body of every callback (PROTOCOL.md).
type Body struct {
	ID      string `json:"id"`
	Event   string `json:"event"`
	Payload any    `json:"payload"`
}

// ForJob returns the outbox entries a finished pre-recorded job owes (none
// when its request named no callback), to be committed with the job's new
// state.
func ForJob(j *store.Job, event string, payload any) ([]*store.Delivery, error) {
	p, err := params.StoredPreRecorded(j.Params)
	if err != nil {
		return nil, err
	}
	url, method, ok := p.CallbackTarget()
	if !ok {
		return nil, nil
	}
	body, err := json.Marshal(Body{ID: j.ID, Event: event, Payload: payload})
	if err != nil {
		return nil, err
	}
	return []*store.Delivery{{JobID: j.ID, Account: j.Account, URL: url, Method: method, Body: body}}, nil
}
