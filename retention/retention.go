package retention

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/earshot-dev/earshot/store"
)

// batch is how many records one store call deletes; a pass
// repeats it until nothing older is left, checking ctx in between.
const batch = 200

// Store is what retention needs of the store (store.Store has it): delete
// up to limit expired records, returning their ids.
type Store interface {
	ExpireJobs(kind store.Kind, cut store.Cutoff, limit int) ([]string, error)
	ExpireUploads(cut store.Cutoff, limit int) ([]string, error)
}

// Run deletes what cfg says has expired, once at start and then every
// cfg.Interval, until ctx ends; it then returns nil. It logs what a pass
// deleted at info and a failed pass at error, and carries on: a retention
// failure never stops the daemon. cfg must have passed Validate. The
// daemon runs it beside its workers (daemon/daemon.go).
func Run(ctx context.Context, db Store, cfg Config, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if !cfg.enabled() {
		return nil
	}
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		start := time.Now()
		n, err := expireOnce(ctx, db, cfg, start)
		if n.jobs[0]+n.jobs[1]+n.uploads > 0 {
			log.Info("retention deleted expired records",
				"pre_recorded", n.jobs[0], "live", n.jobs[1], "uploads", n.uploads,
				"elapsed_ms", time.Since(start).Milliseconds())
		}
		if err != nil && ctx.Err() == nil {
			log.Error("retention pass failed", "error", err)
		}
		t.Reset(cfg.Interval)
	}
}

// expired counts what one retention pass deleted.
type expired struct {
	jobs    [2]int // pre-recorded, live
	uploads int
}

// expireOnce deletes everything expired as of now, in batches.
func expireOnce(ctx context.Context, db Store, cfg Config, now time.Time) (expired, error) {
	var n expired
	var errs []error
	for i, k := range []struct {
		kind store.Kind
		cut  store.Cutoff
	}{
		{store.KindPreRecorded, cfg.cutoff(now, cfg.PreRecordedDays, func(a Account) *int { return a.PreRecordedDays })},
		{store.KindLive, cfg.cutoff(now, cfg.LiveDays, func(a Account) *int { return a.LiveDays })},
	} {
		if k.cut.Latest().IsZero() {
			continue
		}
		c, err := drain(ctx, func() ([]string, error) { return db.ExpireJobs(k.kind, k.cut, batch) })
		n.jobs[i] += c
		if err != nil {
			errs = append(errs, fmt.Errorf("expire %s jobs: %w", k.kind, err))
		}
	}
	if cut := cfg.cutoff(now, cfg.UploadDays, func(a Account) *int { return a.UploadDays }); !cut.Latest().IsZero() {
		c, err := drain(ctx, func() ([]string, error) { return db.ExpireUploads(cut, batch) })
		n.uploads += c
		if err != nil {
			errs = append(errs, fmt.Errorf("expire uploads: %w", err))
		}
	}
	return n, errors.Join(errs...)
}

// drain calls expire until it returns a short batch, an error or ctx ends,
// and returns how many records it deleted.
func drain(ctx context.Context, expire func() ([]string, error)) (int, error) {
	total := 0
	for ctx.Err() == nil {
		ids, err := expire()
		total += len(ids)
		if err != nil {
			return total, err
		}
		if len(ids) < batch {
			return total, nil
		}
	}
	return total, ctx.Err()
}
