package audit_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/earshot-dev/earshot/audit"
	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/storetest"
)

func config(queue, maxEntries int) audit.Config {
	c := audit.Config{Queue: queue, MaxEntries: maxEntries}
	c.SetDefaults()
	return c
}

// run runs the trail until fn returns, then until Run has appended what
// was queued and returned.
func run(t *testing.T, tr *audit.Trail, fn func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- tr.Run(ctx) }()
	fn()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// count reads counter i of the trail's Collectors (appended, dropped,
// failed, expired).
func count(t *testing.T, tr *audit.Trail, i int) float64 {
	t.Helper()
	var m dto.Metric
	if err := tr.Collectors()[i].(prometheus.Counter).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

func entry(i int) store.AuditEntry {
	return store.AuditEntry{KeyID: fmt.Sprintf("k%d", i), Account: "acme", Source: "127.0.0.1:1",
		Action: store.AuditPreRecordedRead, Object: fmt.Sprintf("job-%d", i), Status: 200}
}

func TestTrailAppendsInOrderAndVerifies(t *testing.T) {
	db := storetest.Open(t)
	tr := audit.New(config(100, 1000), db, nil)
	run(t, tr, func() {
		for i := range 50 {
			tr.Record(entry(i))
		}
	})
	es, err := db.ListAudit(store.AuditQuery{Limit: 100})
	if err != nil || len(es) != 50 {
		t.Fatalf("ListAudit: %d entries, %v; want 50", len(es), err)
	}
	for i, e := range es {
		if e.Object != fmt.Sprintf("job-%d", i) || e.At.IsZero() {
			t.Fatalf("entry %d: %+v", i, e)
		}
	}
	r, err := audit.Verify(db)
	if err != nil || r.Entries != 50 || r.HeadSeq != 50 || string(r.HeadHash) != string(es[49].Hash) {
		t.Errorf("Verify = %+v, %v; want 50 entries, head 50", r, err)
	}
	if got := count(t, tr, 0); got != 50 {
		t.Errorf("appended counter %v, want 50", got)
	}
}

// A full queue drops and counts; Record never waits for the store.
func TestTrailDropsWhenQueueFull(t *testing.T) {
	db := storetest.Open(t)
	tr := audit.New(config(3, 1000), db, nil)
	for i := range 5 { // Run not started: nothing drains the queue
		tr.Record(entry(i))
	}
	if got := count(t, tr, 1); got != 2 {
		t.Errorf("dropped counter %v, want 2", got)
	}
	run(t, tr, func() {})
	if es, _ := db.ListAudit(store.AuditQuery{Limit: 100}); len(es) != 3 {
		t.Errorf("%d entries stored, want the 3 queued", len(es))
	}
}

// The count bound applies at start; the chain verifies from its anchor.
func TestTrailBoundsAndVerifiesAcrossTheCut(t *testing.T) {
	db := storetest.Open(t)
	for i := range 1500 {
		e := entry(i)
		if err := db.AppendAudit(&e); err != nil {
			t.Fatal(err)
		}
	}
	tr := audit.New(config(10, 1000), db, nil)
	run(t, tr, func() {
		// Run applies the bounds first thing: poll the anchor.
		deadline := time.Now().Add(10 * time.Second)
		for a, _ := db.AuditAnchor(); a.Seq < 500 && time.Now().Before(deadline); a, _ = db.AuditAnchor() {
		}
	})
	if got := count(t, tr, 3); got != 500 {
		t.Errorf("expired counter %v, want 500", got)
	}
	a, _ := db.AuditAnchor()
	if a.Seq != 500 {
		t.Fatalf("anchor %d, want 500 (1500 entries, 1000 kept)", a.Seq)
	}
	r, err := audit.Verify(db)
	if err != nil || r.Entries != 1000 || r.HeadSeq != 1500 {
		t.Errorf("Verify = %+v, %v; want 1000 entries to 1500", r, err)
	}
}

// tampered is the store as read after someone edited one entry.
type tampered struct {
	*storeReader
	seq uint64
}

type storeReader = struct{ audit.Reader }

func (t tampered) ListAudit(q store.AuditQuery) ([]*store.AuditEntry, error) {
	es, err := t.Reader.ListAudit(q)
	for _, e := range es {
		if e.Seq == t.seq {
			e.Account = "someone-else"
		}
	}
	return es, err
}

func TestVerifyNamesTheFirstBrokenEntry(t *testing.T) {
	db := storetest.Open(t)
	for i := range 20 {
		e := entry(i)
		if err := db.AppendAudit(&e); err != nil {
			t.Fatal(err)
		}
	}
	_, err := audit.Verify(tampered{&storeReader{db}, 7})
	var be *audit.BrokenError
	if !errors.As(err, &be) || be.Seq != 7 || !errors.Is(err, store.ErrAuditBroken) {
		t.Errorf("Verify of a trail with entry 7 edited = %v, want broken at 7", err)
	}
}

// A hostile path id (invalid UTF-8, NUL, 4 KiB) is made to fit: its batch
// is stored whole, and the chain verifies after the store's round trip.
func TestTrailSanitizesHostileFields(t *testing.T) {
	db := storetest.Open(t)
	tr := audit.New(config(10, 1000), db, nil)
	run(t, tr, func() {
		tr.Record(entry(0))
		e := entry(1)
		e.Object = "\xff\x00" + strings.Repeat("é", 2048)
		tr.Record(e)
	})
	es, _ := db.ListAudit(store.AuditQuery{Limit: 10})
	if len(es) != 2 || len(es[1].Object) > store.MaxAuditField || !utf8.ValidString(es[1].Object) {
		t.Fatalf("stored %d entries; hostile object %q", len(es), es[len(es)-1].Object)
	}
	if _, err := audit.Verify(db); err != nil {
		t.Error(err)
	}
}
