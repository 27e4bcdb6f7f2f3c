package retention_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/earshot-dev/earshot/config"
	"github.com/earshot-dev/earshot/retention"
	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/storetest"
)

func TestConfig(t *testing.T) {
	tests := []struct {
		name    string
		cfg     retention.Config
		wantErr []string // keys named in the error
	}{
		{"defaults", retention.Config{}, nil},
		{"all set", retention.Config{PreRecordedDays: 30, LiveDays: 7, UploadDays: 1, Interval: 10 * time.Minute}, nil},
		{"negative", retention.Config{PreRecordedDays: -1, LiveDays: -2, UploadDays: -3},
			[]string{"retention.pre_recorded_days", "retention.live_days", "retention.upload_days"}},
		{"too long", retention.Config{UploadDays: 40000}, []string{"retention.upload_days"}},
		{"interval too short", retention.Config{Interval: time.Second}, []string{"retention.interval"}},
		{"interval negative", retention.Config{Interval: -time.Hour}, []string{"retention.interval"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.cfg
			c.SetDefaults()
			if tc.cfg.Interval == 0 && c.Interval != time.Hour {
				t.Errorf("default interval %s, want 1h", c.Interval)
			}
			err := config.Under("retention", c.Validate()) // its keys as the file names them
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate = nil, want errors naming %v", tc.wantErr)
			}
			for _, key := range tc.wantErr {
				if !strings.Contains(err.Error(), key+":") {
					t.Errorf("Validate = %v; does not name %s", err, key)
				}
			}
		})
	}
}

// TestRun runs the retention loop in a synctest bubble: the first
// pass at start deletes what is already old, the next one an hour later
// what has aged past the limit since, and nothing else is ever touched.
func TestRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := storetest.Open(t)
		now := time.Now()
		day := 24 * time.Hour
		job := func(id string, kind store.Kind, st store.Status, age time.Duration) {
			t.Helper()
			j := &store.Job{ID: id, Account: "acme", Kind: kind, Status: st, CreatedAt: now.Add(-age), Blob: "b-" + id}
			if _, err := db.WriteBlob(j.Blob, strings.NewReader("audio"), 0); err != nil {
				t.Fatal(err)
			}
			if err := db.CreateJob(j); err != nil {
				t.Fatal(err)
			}
		}
		upload := func(id string, age time.Duration) {
			t.Helper()
			if err := db.PutUpload(&store.Upload{ID: id, Account: "acme", CreatedAt: now.Add(-age), Blob: "b-" + id}); err != nil {
				t.Fatal(err)
			}
		}
		job("pre-old", store.KindPreRecorded, store.StatusDone, 8*day)
		job("pre-old-error", store.KindPreRecorded, store.StatusError, 7*day+time.Minute)
		job("pre-ages", store.KindPreRecorded, store.StatusDone, 7*day-30*time.Minute)
		job("pre-new", store.KindPreRecorded, store.StatusDone, 6*day)
		job("pre-queued", store.KindPreRecorded, store.StatusQueued, 30*day)
		job("pre-processing", store.KindPreRecorded, store.StatusProcessing, 30*day)
		job("live-old", store.KindLive, store.StatusDone, 365*day) // live_days 0: forever
		upload("up-old", 2*day)
		upload("up-ages", day-30*time.Minute)
		upload("up-new", time.Hour)

		var logs bytes.Buffer
		log := slog.New(slog.NewJSONHandler(&logs, nil))
		cfg := retention.Config{PreRecordedDays: 7, UploadDays: 1}
		cfg.SetDefaults()
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- retention.Run(ctx, db, cfg, log) }()

		exists := func(id string) bool {
			if strings.HasPrefix(id, "up-") {
				_, err := db.Upload(id)
				return !errors.Is(err, store.ErrNotFound)
			}
			_, err := db.Job(id)
			return !errors.Is(err, store.ErrNotFound)
		}
		check := func(when string, gone ...string) {
			t.Helper()
			all := []string{"pre-old", "pre-old-error", "pre-ages", "pre-new", "pre-queued", "pre-processing",
				"live-old", "up-old", "up-ages", "up-new"}
			for _, id := range all {
				want := true
				for _, g := range gone {
					if g == id {
						want = false
					}
				}
				if got := exists(id); got != want {
					t.Errorf("%s: %s exists %t, want %t", when, id, got, want)
				}
			}
		}

		synctest.Wait() // first pass, at start
		check("at start", "pre-old", "pre-old-error", "up-old")
		time.Sleep(59 * time.Minute)
		synctest.Wait()
		check("after 59m", "pre-old", "pre-old-error", "up-old")
		time.Sleep(time.Minute)
		synctest.Wait() // second pass, 1h after the first
		check("after 1h", "pre-old", "pre-old-error", "up-old", "pre-ages", "up-ages")

		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v, want nil after cancel", err)
		}
		var counts []map[string]any
		for line := range strings.Lines(logs.String()) {
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatal(err)
			}
			if m["level"] != "INFO" || m["msg"] != "retention deleted expired records" {
				t.Errorf("unexpected log line %s", line)
				continue
			}
			counts = append(counts, m)
		}
		if len(counts) != 2 || counts[0]["pre_recorded"] != 2.0 || counts[0]["uploads"] != 1.0 ||
			counts[1]["pre_recorded"] != 1.0 || counts[1]["uploads"] != 1.0 || counts[1]["live"] != 0.0 {
			t.Errorf("logged counts %v; want 2 pre-recorded + 1 upload, then 1 + 1", counts)
		}
	})
}

// TestRunDisabled: with every day count 0 nothing is deleted and
// the loop returns at once.
func TestRunDisabled(t *testing.T) {
	db := storetest.Open(t)
	j := &store.Job{ID: "old", Account: "acme", Kind: store.KindPreRecorded, Status: store.StatusDone,
		CreatedAt: time.Now().Add(-1000 * 24 * time.Hour)}
	if err := db.CreateJob(j); err != nil {
		t.Fatal(err)
	}
	cfg := retention.Config{}
	cfg.SetDefaults()
	if err := retention.Run(t.Context(), db, cfg, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Job("old"); err != nil {
		t.Errorf("job deleted with retention disabled: %v", err)
	}
}

// TestRunPerAccount: retention.accounts overrides the section's days per
// account and kind: a longer and a shorter keep, a 0 that keeps forever,
// and a kind the entry leaves out taking the section's.
func TestRunPerAccount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := storetest.Open(t)
		now := time.Now()
		day := 24 * time.Hour
		for _, acct := range []string{"acme", "bank", "lab", "hold"} {
			for _, age := range []time.Duration{5 * day, 40 * day, 400 * day} {
				id := fmt.Sprintf("%s-%d", acct, int(age/day))
				if err := db.CreateJob(&store.Job{ID: id, Account: acct, Kind: store.KindLive, Status: store.StatusDone, CreatedAt: now.Add(-age)}); err != nil {
					t.Fatal(err)
				}
				if err := db.PutUpload(&store.Upload{ID: "u-" + id, Account: acct, CreatedAt: now.Add(-age)}); err != nil {
					t.Fatal(err)
				}
			}
		}
		days := func(d int) *int { return &d }
		cfg := retention.Config{LiveDays: 30, UploadDays: 1, Accounts: []retention.Account{
			{Account: "bank", LiveDays: days(365)},                     // uploads: the section's 1
			{Account: "lab", LiveDays: days(3), UploadDays: days(100)}, // shorter, longer
			{Account: "hold", LiveDays: days(0), UploadDays: days(0)},  // forever
		}}
		cfg.SetDefaults()
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- retention.Run(ctx, db, cfg, nil) }()
		synctest.Wait()
		cancel()
		<-done
		gone := map[string]bool{
			"acme-40": true, "acme-400": true, "bank-400": true, "lab-5": true, "lab-40": true, "lab-400": true,
			"u-acme-5": true, "u-acme-40": true, "u-acme-400": true, "u-bank-5": true, "u-bank-40": true, "u-bank-400": true, "u-lab-400": true,
		}
		for _, acct := range []string{"acme", "bank", "lab", "hold"} {
			for _, d := range []int{5, 40, 400} {
				id := fmt.Sprintf("%s-%d", acct, d)
				_, err := db.Job(id)
				if got := errors.Is(err, store.ErrNotFound); got != gone[id] {
					t.Errorf("job %s deleted %t, want %t", id, got, gone[id])
				}
				_, err = db.Upload("u-" + id)
				if got := errors.Is(err, store.ErrNotFound); got != gone["u-"+id] {
					t.Errorf("upload u-%s deleted %t, want %t", id, got, gone["u-"+id])
				}
			}
		}
	})
}
