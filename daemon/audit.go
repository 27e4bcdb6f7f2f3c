package daemon

import (
	"context"
	"fmt"
	"time"

	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/store"
)

// Audit queues e for the audit trail (package audit): it never blocks nor
// fails; a lost entry is counted and logged there.
func (d *Daemon) Audit(e store.AuditEntry) { d.audit.Record(e) }

// AuditLog returns the audit entries q selects (GET /admin/audit).
func (d *Daemon) AuditLog(ctx context.Context, q store.AuditQuery) ([]*store.AuditEntry, error) {
	return d.db.ListAudit(q)
}

// SetHold puts a legal hold on the job id of kind (hold) or releases it,
// for the admin key keyID, and returns the job. An unknown id, or one of
// the other kind, is store.ErrNotFound; setting a hold twice keeps the
// first one's time and key.
func (d *Daemon) SetHold(ctx context.Context, kind store.Kind, id, keyID string, hold bool) (*store.Job, error) {
	if !params.ValidID(id) {
		return nil, fmt.Errorf("job %q: %w", id, store.ErrNotFound)
	}
	j, err := d.db.UpdateJob(id, func(j *store.Job) ([]*store.Delivery, error) {
		if j.Kind != kind {
			return nil, fmt.Errorf("job %s: %w", id, store.ErrNotFound)
		}
		switch {
		case hold && !j.Held():
			j.HeldAt, j.HeldBy = time.Now().UTC(), keyID
		case !hold:
			j.HeldAt, j.HeldBy = time.Time{}, ""
		}
		return nil, nil
	})
	if err != nil {
		return nil, err
	}
	if hold {
		d.log.Info("legal hold set", "job_id", id, "account_id", keyID)
	} else {
		d.log.Info("legal hold released", "job_id", id, "account_id", keyID)
	}
	return j, nil
}

// HoldOf returns the job id of kind, of any account, for an admin to read
// its legal hold. An unknown id, or one of the other kind, is
// store.ErrNotFound.
func (d *Daemon) HoldOf(ctx context.Context, kind store.Kind, id string) (*store.Job, error) {
	if !params.ValidID(id) {
		return nil, fmt.Errorf("job %q: %w", id, store.ErrNotFound)
	}
	j, err := d.db.Job(id)
	if err != nil {
		return nil, err
	}
	if j.Kind != kind {
		return nil, fmt.Errorf("job %s: %w", id, store.ErrNotFound)
	}
	return j, nil
}

// auditedExpiry is the store as retention sees it: every job and upload
// it expires is recorded in the audit trail, by the daemon itself.
type auditedExpiry struct {
	store.Store
	d *Daemon
}

func (a auditedExpiry) ExpireJobs(kind store.Kind, before store.Cutoff, limit int) ([]string, error) {
	ids, err := a.Store.ExpireJobs(kind, before, limit)
	action := store.AuditPreRecordedExpire
	if kind == store.KindLive {
		action = store.AuditLiveExpire
	}
	a.record(action, ids)
	return ids, err
}

func (a auditedExpiry) ExpireUploads(before store.Cutoff, limit int) ([]string, error) {
	ids, err := a.Store.ExpireUploads(before, limit)
	a.record(store.AuditUploadExpire, ids)
	return ids, err
}

func (a auditedExpiry) record(action store.AuditAction, ids []string) {
	for _, id := range ids {
		a.d.Audit(store.AuditEntry{Source: "retention", Action: action, Object: id})
	}
}
