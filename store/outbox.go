package store

import "time"

// Delivery is a callback owed to a receiver: one HTTP request the outbox
// sends until it succeeds or the daemon gives up and deletes it.
type Delivery struct {
	ID          string    `json:"id"` // assigned by EnqueueDelivery / UpdateJob when empty
	JobID       string    `json:"job_id"`
	Account     string    `json:"account"`
	URL         string    `json:"url"`
	Method      string    `json:"method"` // POST or PUT
	Body        []byte    `json:"body"`
	Attempts    int       `json:"attempts"`
	NextAttempt time.Time `json:"next_attempt,omitzero"` // zero = due now
	CreatedAt   time.Time `json:"created_at"`            // set when zero
	LastError   string    `json:"last_error,omitempty"`
}

// OwnedBy fills the delivery's JobID and Account from j where they are
// empty, as UpdateJob does on both backends for the deliveries its fn
// returns.
func (d *Delivery) OwnedBy(j *Job) {
	if d.JobID == "" {
		d.JobID = j.ID
	}
	if d.Account == "" {
		d.Account = j.Account
	}
}

// DeliveryLease is how long ClaimDeliveries holds a delivery for its
// caller: no other claim returns it until the caller reschedules or
// deletes it, or the lease ends (the caller died mid-attempt).
const DeliveryLease = 2 * time.Minute
