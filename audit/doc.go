// Package audit keeps the audit trail: who (an API key's id, its account,
// the client's address) did what to which object, when, as a hash chain
// in the store (store.AuditEntry, store.Store.AppendAudit), bounded by its
// own retention (Config). The doors and the daemon hand it entries with
// Trail.Record, which never blocks and never fails a request: entries go
// through a bounded queue to Trail.Run, which appends them in batches;
// an entry the queue cannot take, or a batch the store refuses, is
// counted (earshot_audit_dropped_total, earshot_audit_failed_total) and
// logged, and the request it records has gone on. Verify walks the chain
// from its anchor and names the first entry that does not follow.
//
// It records ids, actions and key ids only: never a secret, a transcript,
// custom metadata or a keyed digit. It does not decide what is audited:
// the doors (api) and the daemon name the actions.
package audit
