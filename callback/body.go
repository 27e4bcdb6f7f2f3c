package callback

import (
	"encoding/json"

	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/store"
)

// Callback headers. The signature is hex HMAC-SHA256 of the body under the
// account's callback secret; the delivery id stays the same across retries
// so receivers can drop duplicates.
const (
	HeaderSignature = "x-earshot-signature"
	HeaderDelivery  = "x-earshot-delivery"
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
