package audit

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/earshot-dev/earshot/store"
)

// Store is what the trail needs of the store (store.Store has it).
type Store interface {
	AppendAudit(es ...*store.AuditEntry) error
	ExpireAudit(before time.Time, maxEntries, limit int) (int, error)
}

// Bounds of one store call.
const (
	// maxBatch is how many queued entries one append commits at most.
	maxBatch = 512
	// expireBatch is how many entries one ExpireAudit call removes at
	// most, so expiry holds the store's writer briefly at a time.
	expireBatch = 5000
)

// Trail queues entries and appends them to the store (Run). Record may be
// called from any goroutine, before, during or after Run.
type Trail struct {
	cfg   Config
	db    Store
	log   *slog.Logger
	queue chan *store.AuditEntry // cap cfg.Queue

	appended prometheus.Counter
	dropped  prometheus.Counter
	failed   prometheus.Counter
	expired  prometheus.Counter
}

// New builds a trail over db; cfg must have passed Validate. It starts
// nothing.
func New(cfg Config, db Store, log *slog.Logger) *Trail {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Trail{
		cfg: cfg, db: db, log: log,
		queue: make(chan *store.AuditEntry, cfg.Queue),
		appended: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "earshot_audit_appended_total", Help: "Audit entries stored.",
		}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "earshot_audit_dropped_total", Help: "Audit entries dropped because the queue to the store was full (audit.queue); the requests went on.",
		}),
		failed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "earshot_audit_failed_total", Help: "Audit entries lost because the store refused their append; the requests went on.",
		}),
		expired: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "earshot_audit_expired_total", Help: "Audit entries removed by the trail's retention (audit.retention_days, audit.max_entries).",
		}),
	}
}

// Collectors returns the trail's counters for the daemon's registry.
func (t *Trail) Collectors() []prometheus.Collector {
	return []prometheus.Collector{t.appended, t.dropped, t.failed, t.expired}
}

// Record queues e for the store, stamped now when its At is zero, its
// fields made to fit (store.SanitizeAudit: a hostile path id cannot make
// the batch it is in refused). It never blocks: with the queue full, e is
// dropped and counted.
func (t *Trail) Record(e store.AuditEntry) {
	if e.At.IsZero() {
		e.At = time.Now()
	}
	for _, f := range []*string{&e.KeyID, &e.Account, &e.Source, &e.Object} {
		*f = store.SanitizeAudit(*f)
	}
	select {
	case t.queue <- &e:
	default:
		t.dropped.Inc()
	}
}

// Run appends queued entries until ctx ends, then appends what is still
// queued and returns nil. It applies the bounds at start and every
// cfg.Interval. A failed append or expiry is logged and counted; it never
// ends Run.
func (t *Trail) Run(ctx context.Context) error {
	tick := time.NewTimer(0)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			for t.flush(nil) > 0 {
			}
			return nil
		case e := <-t.queue:
			t.flush(e)
		case <-tick.C:
			t.expire(ctx, time.Now())
			tick.Reset(t.cfg.Interval)
		}
	}
}

// flush appends first (if not nil) and what else is queued, up to
// maxBatch, in one store call, and returns how many entries it took.
func (t *Trail) flush(first *store.AuditEntry) int {
	batch := make([]*store.AuditEntry, 0, maxBatch)
	if first != nil {
		batch = append(batch, first)
	}
gather:
	for len(batch) < maxBatch {
		select {
		case e := <-t.queue:
			batch = append(batch, e)
		default:
			break gather
		}
	}
	if len(batch) == 0 {
		return 0
	}
	if err := t.db.AppendAudit(batch...); err != nil {
		t.failed.Add(float64(len(batch)))
		t.log.Error("audit entries not stored", "count", len(batch), "error", err)
		return len(batch)
	}
	t.appended.Add(float64(len(batch)))
	return len(batch)
}

// expire removes what is past the bounds as of now, a batch at a time.
func (t *Trail) expire(ctx context.Context, now time.Time) {
	before := now.Add(-time.Duration(t.cfg.RetentionDays) * 24 * time.Hour)
	total := 0
	for ctx.Err() == nil {
		n, err := t.db.ExpireAudit(before, t.cfg.MaxEntries, expireBatch)
		total += n
		if err != nil {
			t.log.Error("audit retention failed", "error", err)
			break
		}
		if n < expireBatch {
			break
		}
	}
	if total > 0 {
		t.expired.Add(float64(total))
		t.log.Info("audit retention removed entries", "count", total)
	}
}
