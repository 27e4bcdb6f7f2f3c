// Package callback delivers callbacks: the outbox (Outbox) claims due
// deliveries from the store and POSTs (or PUTs) them, signed with the
// account's callback secret, retrying with exponential backoff until they
// succeed, are refused or expire (callbacks.max_age); ForJob builds the
// delivery a finished pre-recorded job owes, Body is every callback's JSON
// body (PROTOCOL.md).
//
// Invariant: a delivery is a store record from the transaction that
// enqueued it until it is delivered, refused or expired; a crash or a
// shutdown mid-attempt leaves it due again once its lease ends
// (store.DeliveryLease). The package does not decide when a job ends or
// what a live session sends: the job service (package daemon) enqueues the
// deliveries and wakes the outbox.
package callback
