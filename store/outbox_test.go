package store_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/storetest"
)

func TestEnqueueDelivery(t *testing.T) {
	db := storetest.Open(t)
	tests := []struct {
		name string
		d    *store.Delivery
		want error
	}{
		{"defaults", &store.Delivery{URL: "http://x/"}, nil},
		{"put", &store.Delivery{URL: "http://x/", Method: "PUT", JobID: "j"}, nil},
		{"given id", &store.Delivery{ID: "fixed", URL: "http://x/"}, nil},
		{"duplicate id", &store.Delivery{ID: "fixed", URL: "http://x/"}, store.ErrExists},
		{"no url", &store.Delivery{}, store.ErrInvalid},
		{"bad method", &store.Delivery{URL: "http://x/", Method: "GET"}, store.ErrInvalid},
		{"nil", nil, store.ErrInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := db.EnqueueDelivery(tc.d)
			if tc.want != nil {
				if !errors.Is(err, tc.want) {
					t.Errorf("EnqueueDelivery = %v, want %v", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.d.ID == "" || tc.d.CreatedAt.IsZero() || tc.d.Method == "" {
				t.Errorf("defaults not filled: %+v", tc.d)
			}
		})
	}
	if n, _ := db.PendingDeliveries(); n != 3 {
		t.Errorf("PendingDeliveries = %d, want 3", n)
	}
}

func TestDeliverySchedule(t *testing.T) {
	db := storetest.Open(t)
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	if _, ok, err := db.NextDelivery(); ok || err != nil {
		t.Fatalf("NextDelivery on empty outbox = %t, %v", ok, err)
	}
	ds := map[string]*store.Delivery{
		"now":    {ID: "now", URL: "http://x/"},
		"past":   {ID: "past", URL: "http://x/", NextAttempt: now.Add(-time.Minute)},
		"exact":  {ID: "exact", URL: "http://x/", NextAttempt: now},
		"future": {ID: "future", URL: "http://x/", NextAttempt: now.Add(time.Nanosecond)},
	}
	for _, id := range []string{"future", "exact", "now", "past"} {
		if err := db.EnqueueDelivery(ds[id]); err != nil {
			t.Fatal(err)
		}
	}
	due := func(at time.Time, limit int) []string {
		t.Helper()
		got, err := db.DueDeliveries(at, limit)
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, d := range got {
			out = append(out, d.ID)
		}
		return out
	}
	tests := []struct {
		name  string
		at    time.Time
		limit int
		want  []string
	}{
		{"at now", now, 0, []string{"now", "past", "exact"}},
		{"limit", now, 2, []string{"now", "past"}},
		{"later", now.Add(time.Hour), 0, []string{"now", "past", "exact", "future"}},
		{"earlier", now.Add(-time.Hour), 0, []string{"now"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := due(tc.at, tc.limit); !slices.Equal(got, tc.want) {
				t.Errorf("DueDeliveries = %v, want %v", got, tc.want)
			}
		})
	}
	if next, ok, err := db.NextDelivery(); !ok || err != nil || !next.IsZero() {
		t.Errorf("NextDelivery = %v, %t, %v; want zero (due now)", next, ok, err)
	}

	// A failed attempt moves the delivery behind the others.
	if err := db.RescheduleDelivery("now", now.Add(time.Hour), "connection refused"); err != nil {
		t.Fatal(err)
	}
	if got := due(now, 0); !slices.Equal(got, []string{"past", "exact"}) {
		t.Errorf("after reschedule DueDeliveries = %v", got)
	}
	got, _ := db.DueDeliveries(now.Add(2*time.Hour), 0)
	last := got[len(got)-1]
	if last.ID != "now" || last.Attempts != 1 || last.LastError != "connection refused" || !last.NextAttempt.Equal(now.Add(time.Hour)) {
		t.Errorf("rescheduled delivery = %+v", last)
	}
	if err := db.RescheduleDelivery("nope", now, ""); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("RescheduleDelivery(unknown) = %v, want ErrNotFound", err)
	}

	for _, id := range []string{"past", "exact", "past"} { // deleting twice is fine
		if err := db.DeleteDelivery(id); err != nil {
			t.Fatal(err)
		}
	}
	if next, ok, _ := db.NextDelivery(); !ok || !next.Equal(now.Add(time.Nanosecond)) {
		t.Errorf("NextDelivery = %v, %t; want future", next, ok)
	}
	if n, _ := db.PendingDeliveries(); n != 2 {
		t.Errorf("PendingDeliveries = %d, want 2", n)
	}
}
