package postgres_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/store"
)

// TestDeliveriesListedInPages: Deliveries reads the outbox a page at a
// time (each page one statement under the store's timeout, so a large
// outbox is listed whole): across the pages' bounds every delivery comes
// once, in id order; RewriteDeliveryBody replaces one body and keeps the
// delivery's schedule, attempts and last error.
func TestDeliveriesListedInPages(t *testing.T) {
	db := openNode(t, pg.NewDatabase(t), "n1")
	next := time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond)
	const n = 2*64 + 1 // two full pages and one more
	for i := range n {
		d := &store.Delivery{ID: fmt.Sprintf("d%04d", n-i), URL: "http://hooks.local/", Body: []byte(fmt.Sprint("body ", n-i)), NextAttempt: next}
		if err := db.EnqueueDelivery(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.RescheduleDelivery("d0065", next, "status 503"); err != nil {
		t.Fatal(err)
	}
	var ids []string
	if err := db.Deliveries(func(d *store.Delivery) { ids = append(ids, d.ID) }); err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		if want := fmt.Sprintf("d%04d", i+1); id != want {
			t.Fatalf("listed %d deliveries, the %dth %s; want %d in id order (%s)", len(ids), i, id, n, want)
		}
	}
	if len(ids) != n {
		t.Fatalf("listed %d deliveries, want %d", len(ids), n)
	}

	err := db.RewriteDeliveryBody("d0065", func(d *store.Delivery) ([]byte, error) {
		if string(d.Body) != "body 65" {
			t.Errorf("fn saw body %q", d.Body)
		}
		return []byte("rewritten"), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	due, err := db.DueDeliveries(next, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range due {
		if d.ID == "d0065" && (string(d.Body) != "rewritten" || d.Attempts != 1 || d.LastError != "status 503" || !d.NextAttempt.Equal(next)) {
			t.Errorf("after the rewrite: %+v", d)
		}
	}
	if err := db.RewriteDeliveryBody("nope", func(*store.Delivery) ([]byte, error) { return []byte("x"), nil }); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("rewrite of a missing delivery: %v, want store.ErrNotFound", err)
	}
}
