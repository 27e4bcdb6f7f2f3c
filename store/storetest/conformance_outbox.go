package storetest

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/store"
)

func outboxCases() []Case {
	return []Case{
		{"EnqueueDelivery", func(t *testing.T, s store.Store) {
			for _, tc := range []struct {
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
				{"long id", &store.Delivery{ID: strings.Repeat("x", 257), URL: "http://x/"}, store.ErrInvalid},
				{"nil", nil, store.ErrInvalid},
			} {
				err := s.EnqueueDelivery(tc.d)
				if tc.want != nil {
					if !errors.Is(err, tc.want) {
						t.Errorf("%s: EnqueueDelivery = %v, want %v", tc.name, err, tc.want)
					}
					continue
				}
				if err != nil || tc.d.ID == "" || tc.d.CreatedAt.IsZero() || tc.d.Method == "" {
					t.Errorf("%s: EnqueueDelivery = %v, defaults %+v", tc.name, err, tc.d)
				}
			}
			if n, _ := s.PendingDeliveries(); n != 3 {
				t.Errorf("PendingDeliveries = %d, want 3", n)
			}
		}},
		{"DeliverySchedule", testDeliverySchedule},
		{"ClaimDeliveries", testClaimDeliveries},
	}
}

func testDeliverySchedule(t *testing.T, s store.Store) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	if _, ok, err := s.NextDelivery(); ok || err != nil {
		t.Fatalf("NextDelivery on empty outbox = %t, %v", ok, err)
	}
	body := []byte("{\"a\":1}\x00\xff")
	ds := map[string]*store.Delivery{
		"now":    {ID: "now", URL: "http://x/", Body: body},
		"past":   {ID: "past", URL: "http://x/", NextAttempt: now.Add(-time.Minute)},
		"exact":  {ID: "exact", URL: "http://x/", NextAttempt: now},
		"future": {ID: "future", URL: "http://x/", NextAttempt: now.Add(time.Nanosecond)},
	}
	for _, id := range []string{"future", "exact", "now", "past"} {
		if err := s.EnqueueDelivery(ds[id]); err != nil {
			t.Fatal(err)
		}
	}
	due := func(at time.Time, limit int) []*store.Delivery {
		t.Helper()
		got, err := s.DueDeliveries(at, limit)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	for _, tc := range []struct {
		name  string
		at    time.Time
		limit int
		want  []string
	}{
		{"at now", now, 0, []string{"now", "past", "exact"}},
		{"limit", now, 2, []string{"now", "past"}},
		{"later", now.Add(time.Hour), 0, []string{"now", "past", "exact", "future"}},
		{"earlier", now.Add(-time.Hour), 0, []string{"now"}},
	} {
		if got := deliveryIDs(due(tc.at, tc.limit)); !slices.Equal(got, tc.want) {
			t.Errorf("%s: DueDeliveries = %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := due(now, 1)[0]; !reflect.DeepEqual(got, ds["now"]) {
		t.Errorf("stored delivery = %+v, want %+v", got, ds["now"])
	}
	if next, ok, err := s.NextDelivery(); !ok || err != nil || !next.IsZero() {
		t.Errorf("NextDelivery = %v, %t, %v; want zero (due now)", next, ok, err)
	}
	if err := s.RescheduleDelivery("now", now.Add(time.Hour), "connection refused"); err != nil {
		t.Fatal(err)
	}
	if got := deliveryIDs(due(now, 0)); !slices.Equal(got, []string{"past", "exact"}) {
		t.Errorf("after reschedule DueDeliveries = %v", got)
	}
	all := due(now.Add(2*time.Hour), 0)
	last := all[len(all)-1]
	if last.ID != "now" || last.Attempts != 1 || last.LastError != "connection refused" || !last.NextAttempt.Equal(now.Add(time.Hour)) {
		t.Errorf("rescheduled delivery = %+v", last)
	}
	if err := s.RescheduleDelivery("nope", now, ""); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("RescheduleDelivery(unknown) = %v, want ErrNotFound", err)
	}
	for _, id := range []string{"past", "exact", "past"} { // deleting twice is fine
		if err := s.DeleteDelivery(id); err != nil {
			t.Fatal(err)
		}
	}
	if next, ok, _ := s.NextDelivery(); !ok || !next.Equal(now.Add(time.Nanosecond)) {
		t.Errorf("NextDelivery = %v, %t; want future", next, ok)
	}
	if n, _ := s.PendingDeliveries(); n != 2 {
		t.Errorf("PendingDeliveries = %d, want 2", n)
	}
}

// testClaimDeliveries: a claimed delivery is not claimed again until its
// attempt is recorded or its lease ends; DueDeliveries still lists it.
func testClaimDeliveries(t *testing.T, s store.Store) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, id := range []string{"a", "b", "c"} {
		if err := s.EnqueueDelivery(&store.Delivery{ID: id, URL: "http://x/", NextAttempt: now.Add(-time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	claim := func(at time.Time, limit int) []string {
		t.Helper()
		got, err := s.ClaimDeliveries(at, limit)
		if err != nil {
			t.Fatal(err)
		}
		return deliveryIDs(got)
	}
	if got := claim(now, 2); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("first claim = %v", got)
	}
	if got := claim(now, 0); !slices.Equal(got, []string{"c"}) {
		t.Fatalf("second claim = %v, want only the unclaimed c", got)
	}
	if got := claim(now, 0); len(got) != 0 {
		t.Fatalf("third claim = %v, want none", got)
	}
	if got, _ := s.DueDeliveries(now, 0); len(got) != 3 {
		t.Errorf("DueDeliveries lists %d, want all 3 (claims hide nothing from it)", len(got))
	}
	if next, ok, _ := s.NextDelivery(); !ok || !next.After(now) {
		t.Errorf("NextDelivery with everything claimed = %v, %t; want the end of a lease", next, ok)
	}
	// Recording an attempt releases the claim.
	if err := s.RescheduleDelivery("a", now, "503"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteDelivery("b"); err != nil {
		t.Fatal(err)
	}
	if got := claim(now, 0); !slices.Equal(got, []string{"a"}) {
		t.Errorf("claim after reschedule = %v, want a", got)
	}
	// A lease ends: the delivery is claimable again (its sender died).
	if got := claim(now.Add(store.DeliveryLease+time.Second), 0); !slices.Equal(got, []string{"c", "a"}) {
		t.Errorf("claim after the leases ended = %v, want c, a", got)
	}
}

func uploadCases() []Case {
	return []Case{
		{"Uploads", func(t *testing.T, s store.Store) {
			u := &store.Upload{ID: "u1", Account: "acme", Filename: "call.mp3", Extension: "mp3", Size: 12345,
				AudioDuration: 61.5, Channels: 2, CreatedAt: t0, Blob: "u1.mp3"}
			for _, tc := range []struct {
				name string
				u    *store.Upload
				want error
			}{
				{"ok", u, nil},
				{"replace", u, nil},
				{"no id", &store.Upload{Account: "acme"}, store.ErrInvalid},
				{"no account", &store.Upload{ID: "u2"}, store.ErrInvalid},
				{"long filename", &store.Upload{ID: "u3", Account: "acme", Filename: strings.Repeat("x", 256)}, store.ErrInvalid},
				{"nil", nil, store.ErrInvalid},
			} {
				if err := s.PutUpload(tc.u); !errors.Is(err, tc.want) {
					t.Errorf("%s: PutUpload = %v, want %v", tc.name, err, tc.want)
				}
			}
			got, err := s.Upload("u1")
			if err != nil {
				t.Fatal(err)
			}
			want := *u
			want.CreatedAt = t0.UTC()
			if !reflect.DeepEqual(got, &want) {
				t.Errorf("Upload = %+v, want %+v", got, &want)
			}
			if _, err := s.Upload("u2"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Upload(unknown) = %v, want ErrNotFound", err)
			}
			for range 2 {
				if err := s.DeleteUpload("u1"); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.Upload("u1"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Upload after delete = %v, want ErrNotFound", err)
			}
		}},
	}
}
