package daemon

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/earshot-dev/earshot/audit"
	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/storetest"
)

// TestRetentionSkipsHeldJobs: what retention runs on (auditedExpiry over
// the real store) keeps a job under a legal hold, deletes the others, and
// records each deletion in the audit trail as the daemon's own; releasing
// the hold lets the next pass take the job.
func TestRetentionSkipsHeldJobs(t *testing.T) {
	db := storetest.Open(t)
	cfg := audit.Config{}
	cfg.SetDefaults()
	d := &Daemon{db: db, log: slog.New(slog.DiscardHandler), audit: audit.New(cfg, db, nil)}
	old := time.Now().Add(-10 * 24 * time.Hour)
	held, free := uuid.NewString(), uuid.NewString()
	for _, id := range []string{held, free} {
		if err := db.CreateJob(&store.Job{ID: id, Account: "acme", Kind: store.KindPreRecorded, Status: store.StatusDone, CreatedAt: old}); err != nil {
			t.Fatal(err)
		}
	}
	ctx := t.Context()
	if _, err := d.SetHold(ctx, store.KindLive, held, "adminkey", true); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("SetHold of the other kind = %v, want ErrNotFound", err)
	}
	if _, err := d.SetHold(ctx, store.KindPreRecorded, held, "adminkey", true); err != nil {
		t.Fatal(err)
	}
	if err := d.db.DeleteJob(held); !errors.Is(err, store.ErrHeld) {
		t.Errorf("delete of the held job = %v, want ErrHeld", err)
	}
	exp := auditedExpiry{db, d}
	cut := time.Now().Add(-24 * time.Hour)
	got, err := exp.ExpireJobs(store.KindPreRecorded, store.Cutoff{Before: cut}, 200)
	if err != nil || len(got) != 1 || got[0] != free {
		t.Fatalf("retention deleted %v, %v; want only %s", got, err, free)
	}
	if _, err := db.Job(held); err != nil {
		t.Errorf("held job after retention: %v", err)
	}
	if _, err := d.SetHold(ctx, store.KindPreRecorded, held, "adminkey", false); err != nil {
		t.Fatal(err)
	}
	if got, err := exp.ExpireJobs(store.KindPreRecorded, store.Cutoff{Before: cut}, 200); err != nil || len(got) != 1 || got[0] != held {
		t.Errorf("retention after release deleted %v, %v; want %s", got, err, held)
	}
	runCtx, cancel := context.WithCancel(ctx)
	cancel() // Run stores what is queued, then returns
	if err := d.audit.Run(runCtx); err != nil {
		t.Fatal(err)
	}
	es, err := db.ListAudit(store.AuditQuery{Limit: 10})
	if err != nil || len(es) != 2 {
		t.Fatalf("audit trail: %d entries, %v; want 2", len(es), err)
	}
	for i, id := range []string{free, held} {
		if e := es[i]; e.Action != store.AuditPreRecordedExpire || e.Object != id || e.Source != "retention" || e.KeyID != "" {
			t.Errorf("entry %d: %+v, want %s expired by retention", i, e, id)
		}
	}
}
