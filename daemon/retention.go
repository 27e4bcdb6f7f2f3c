package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/earshot-dev/earshot/config"
	"github.com/earshot-dev/earshot/store"
)

// RetentionConfig says how long finished jobs and uploads are kept. The
// YAML key is retention; a zero number of days keeps them forever.
type RetentionConfig struct {
	// PreRecordedDays deletes pre-recorded jobs that ended (done or error)
	// and were created more than this many days ago, with their audio and
	// result; 0 keeps them forever (default). Jobs with a callback still
	// being retried are kept until the outbox is done with them.
	PreRecordedDays int `yaml:"pre_recorded_days"`
	// LiveDays does the same for live sessions; 0 keeps them forever (default).
	LiveDays int `yaml:"live_days"`
	// UploadDays deletes uploaded files (POST /v2/upload) older than this;
	// jobs already made from them keep their audio. 0 keeps them forever
	// (default).
	UploadDays int `yaml:"upload_days"`
	// Interval is how often retention runs (also once at start); default 1h.
	Interval time.Duration `yaml:"interval"`
}

// maxRetentionDays bounds the day counts (100 years).
const maxRetentionDays = 36500

// retentionBatch is how many records one store call deletes; a pass
// repeats it until nothing older is left, checking ctx in between.
const retentionBatch = 200

// SetDefaults fills zero fields: Interval 1h.
func (c *RetentionConfig) SetDefaults() {
	if c.Interval == 0 {
		c.Interval = time.Hour
	}
}

// Validate checks the retention settings, each problem naming its key.
func (c RetentionConfig) Validate() error {
	var errs []error
	for _, f := range []struct {
		key  string
		days int
	}{
		{"pre_recorded_days", c.PreRecordedDays},
		{"live_days", c.LiveDays},
		{"upload_days", c.UploadDays},
	} {
		if f.days < 0 || f.days > maxRetentionDays {
			errs = append(errs, config.Errorf(f.key, "must be 0 (keep forever) to %d, not %d", maxRetentionDays, f.days))
		}
	}
	if c.Interval < time.Minute || c.Interval > 7*24*time.Hour {
		errs = append(errs, config.Errorf("interval", "must be 1m to 168h, not %s", c.Interval))
	}
	return errors.Join(errs...)
}

// enabled reports whether anything expires at all.
func (c RetentionConfig) enabled() bool {
	return c.PreRecordedDays > 0 || c.LiveDays > 0 || c.UploadDays > 0
}

// RunRetention deletes what cfg says has expired, once at start and then
// every cfg.Interval, until ctx ends; it then returns nil. It logs what a
// pass deleted at info and a failed pass at error, and carries on: a
// retention failure never stops the daemon. cfg must have passed Validate.
// Daemon.runRetention runs it with the daemon's store and logger.
func RunRetention(ctx context.Context, db *store.DB, cfg RetentionConfig, log *slog.Logger) error {
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
func expireOnce(ctx context.Context, db *store.DB, cfg RetentionConfig, now time.Time) (expired, error) {
	var n expired
	var errs []error
	days := func(d int) time.Time { return now.Add(-time.Duration(d) * 24 * time.Hour) }
	for i, k := range []struct {
		kind store.Kind
		days int
	}{
		{store.KindPreRecorded, cfg.PreRecordedDays},
		{store.KindLive, cfg.LiveDays},
	} {
		if k.days <= 0 {
			continue
		}
		c, err := drain(ctx, func() ([]string, error) { return db.ExpireJobs(k.kind, days(k.days), retentionBatch) })
		n.jobs[i] += c
		if err != nil {
			errs = append(errs, fmt.Errorf("expire %s jobs: %w", k.kind, err))
		}
	}
	if cfg.UploadDays > 0 {
		c, err := drain(ctx, func() ([]string, error) { return db.ExpireUploads(days(cfg.UploadDays), retentionBatch) })
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
		if len(ids) < retentionBatch {
			return total, nil
		}
	}
	return total, ctx.Err()
}
