package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/store"
)

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("read failed") }

func blobCases() []Case {
	return []Case{
		{"WriteBlob", func(t *testing.T, s store.Store) {
			data := strings.Repeat("0123456789", 100)
			for _, tc := range []struct {
				name, blob string
				limit      int64
				want       error
			}{
				{"no limit", "b1", 0, nil},
				{"under limit", "b2", 1001, nil},
				{"exactly limit", "b3", 1000, nil},
				{"over limit", "b4", 999, store.ErrTooLarge},
				{"traversal", "../x", 0, store.ErrInvalidName},
				{"slash", "a/b", 0, store.ErrInvalidName},
				{"dot dot", "..", 0, store.ErrInvalidName},
				{"temporary prefix", ".tmp-x", 0, store.ErrInvalidName},
			} {
				n, err := s.WriteBlob(tc.blob, strings.NewReader(data), tc.limit)
				if tc.want != nil {
					if !errors.Is(err, tc.want) {
						t.Errorf("%s: WriteBlob = %d, %v; want %v", tc.name, n, err, tc.want)
					}
					if store.ValidName(tc.blob) && blobExists(t, s, tc.blob) {
						t.Errorf("%s: rejected blob exists", tc.name)
					}
					continue
				}
				if err != nil || n != 1000 {
					t.Fatalf("%s: WriteBlob = %d, %v; want 1000", tc.name, n, err)
				}
				if got := readBlob(t, s, tc.blob); got != data {
					t.Errorf("%s: blob holds %d bytes, want the 1000 written", tc.name, len(got))
				}
			}
			writeBlob(t, s, "b1", "new")
			if got := readBlob(t, s, "b1"); got != "new" {
				t.Errorf("overwritten blob = %q", got)
			}
			if _, err := s.WriteBlob("b5", io.MultiReader(strings.NewReader("abc"), errReader{}), 0); err == nil {
				t.Error("WriteBlob with a failing reader succeeded")
			}
			if blobExists(t, s, "b5") {
				t.Error("a failed write left a blob")
			}
			writeBlob(t, s, "empty", "")
			if got := readBlob(t, s, "empty"); got != "" {
				t.Errorf("empty blob = %q", got)
			}
		}},
		{"LargeBlobStreams", func(t *testing.T, s store.Store) {
			// 2.5 MiB of a pattern that shows a misplaced chunk, written from
			// and read into small buffers.
			const size = 5<<19 + 123
			pattern := make([]byte, size)
			for i := range pattern {
				pattern[i] = byte(i*7 + i>>16)
			}
			n, err := s.WriteBlob("big", io.LimitReader(bytes.NewReader(pattern), size), size)
			if err != nil || n != size {
				t.Fatalf("WriteBlob = %d, %v", n, err)
			}
			r, err := s.OpenBlob("big")
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if fi, err := r.Stat(); err != nil || fi.Size() != size {
				t.Errorf("Stat = %v, %v; want %d bytes", fi, err, size)
			}
			var got bytes.Buffer
			buf := make([]byte, 1000)
			if _, err := io.CopyBuffer(&got, struct{ io.Reader }{r}, buf); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), pattern) {
				t.Errorf("read back %d bytes that differ from the %d written", got.Len(), size)
			}
			if _, err := s.WriteBlob("big2", bytes.NewReader(pattern), size-1); !errors.Is(err, store.ErrTooLarge) {
				t.Errorf("WriteBlob over the limit = %v, want ErrTooLarge", err)
			}
		}},
		{"LinkBlob", func(t *testing.T, s store.Store) {
			writeBlob(t, s, "upload", "audio bytes")
			writeBlob(t, s, "job", "old")
			if err := s.LinkBlob("upload", "job"); err != nil {
				t.Fatal(err)
			}
			if got := readBlob(t, s, "job"); got != "audio bytes" {
				t.Errorf("linked blob = %q", got)
			}
			if err := s.RemoveBlob("upload"); err != nil {
				t.Fatal(err)
			}
			if got := readBlob(t, s, "job"); got != "audio bytes" {
				t.Errorf("after removing the source, blob = %q", got)
			}
			for _, tc := range []struct {
				src, dst string
				want     error
			}{{"upload", "x", store.ErrNotFound}, {"../etc", "x", store.ErrInvalidName}, {"job", "../x", store.ErrInvalidName}} {
				if err := s.LinkBlob(tc.src, tc.dst); !errors.Is(err, tc.want) {
					t.Errorf("LinkBlob(%q, %q) = %v, want %v", tc.src, tc.dst, err, tc.want)
				}
			}
		}},
		{"OpenRemoveBlob", func(t *testing.T, s store.Store) {
			if _, err := s.OpenBlob("missing"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("OpenBlob(missing) = %v, want ErrNotFound", err)
			}
			if _, err := s.OpenBlob("../earshot.db"); !errors.Is(err, store.ErrInvalidName) {
				t.Errorf("OpenBlob(traversal) = %v, want ErrInvalidName", err)
			}
			if err := s.RemoveBlob("missing"); err != nil {
				t.Errorf("RemoveBlob(missing) = %v", err)
			}
			if err := s.RemoveBlob("../earshot.db"); !errors.Is(err, store.ErrInvalidName) {
				t.Errorf("RemoveBlob(traversal) = %v, want ErrInvalidName", err)
			}
			writeBlob(t, s, "x", "data")
			if err := s.RemoveBlob("x"); err != nil || blobExists(t, s, "x") {
				t.Errorf("RemoveBlob = %v, blob still there: %t", err, blobExists(t, s, "x"))
			}
		}},
		{"SweepBlobsAndAccountBytes", func(t *testing.T, s store.Store) {
			now := time.Now()
			writeBlob(t, s, "upload-1", strings.Repeat("x", 1000))
			if err := s.PutUpload(&store.Upload{ID: "1", Account: "acme", Blob: "upload-1", CreatedAt: now}); err != nil {
				t.Fatal(err)
			}
			if err := s.LinkBlob("upload-1", "job-a"); err != nil {
				t.Fatal(err)
			}
			a := newJob("a", "acme", store.KindPreRecorded, store.StatusQueued, now)
			a.Blob = "job-a"
			writeBlob(t, s, "live-b.wav", strings.Repeat("x", 300))
			b := newJob("b", "acme", store.KindLive, store.StatusProcessing, now)
			b.Blob = "live-b.wav"
			writeBlob(t, s, "job-c", strings.Repeat("x", 50))
			c := newJob("c", "other", store.KindPreRecorded, store.StatusError, now)
			c.Blob = "job-c"
			mustCreate(t, s, a, b, c)
			writeBlob(t, s, "job-orphan", strings.Repeat("x", 7000))
			writeBlob(t, s, "upload-orphan", "0123456789")
			if n, err := s.AccountBytes("acme"); err != nil || n != stored(s, 1000)+stored(s, 300) {
				t.Errorf("AccountBytes(acme) = %d, %v; want %d (the linked upload once, the recording)", n, err, stored(s, 1000)+stored(s, 300))
			}
			removed, err := s.SweepBlobs()
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(removed)
			if !slices.Equal(removed, []string{"job-orphan", "upload-orphan"}) {
				t.Errorf("SweepBlobs removed %v", removed)
			}
			for _, name := range []string{"job-a", "job-c", "live-b.wav", "upload-1"} {
				if !blobExists(t, s, name) {
					t.Errorf("SweepBlobs removed %s, which a record names", name)
				}
			}
			if n, err := s.AccountBytes("nobody"); err != nil || n != 0 {
				t.Errorf("AccountBytes(nobody) = %d, %v", n, err)
			}
		}},
	}
}

func retentionCases() []Case {
	return []Case{
		{"ExpireJobs", func(t *testing.T, s store.Store) {
			cut := t0
			want := map[store.Kind][]string{} // per kind, oldest first
			for i, st := range []store.Status{store.StatusQueued, store.StatusProcessing, store.StatusDone, store.StatusError} {
				for _, kind := range []store.Kind{store.KindPreRecorded, store.KindLive} {
					for _, age := range []struct {
						name    string
						created time.Time
					}{{"old", cut.Add(-time.Duration(48-i) * time.Hour)}, {"edge", cut}, {"new", cut.Add(time.Hour)}} {
						id := string(kind) + "-" + string(st) + "-" + age.name
						j := newJob(id, "acme", kind, st, age.created)
						j.Blob = "blob-" + id
						writeBlob(t, s, j.Blob, "audio")
						mustCreate(t, s, j)
						if age.name == "old" && (st == store.StatusDone || st == store.StatusError) {
							want[kind] = append(want[kind], id)
						}
					}
				}
			}
			owed := newJob("owed", "acme", store.KindPreRecorded, store.StatusDone, cut.Add(-1000*time.Hour))
			mustCreate(t, s, owed)
			if err := s.EnqueueDelivery(&store.Delivery{JobID: "owed", Account: "acme", URL: "http://127.0.0.1:9/cb"}); err != nil {
				t.Fatal(err)
			}
			pre := want[store.KindPreRecorded]
			if n, _ := s.CountJobs(store.KindPreRecorded, ""); n != 13 {
				t.Errorf("pre-recorded jobs before expiry: %d, want 13", n)
			}
			got, err := s.ExpireJobs(store.KindPreRecorded, store.Cutoff{Before: cut}, 1)
			if err != nil || !slices.Equal(got, pre[:1]) {
				t.Fatalf("ExpireJobs(limit 1) = %v, %v; want %v", got, err, pre[:1])
			}
			got, err = s.ExpireJobs(store.KindPreRecorded, store.Cutoff{Before: cut}, 100)
			if err != nil || !slices.Equal(got, pre[1:]) {
				t.Fatalf("ExpireJobs = %v, %v; want %v", got, err, pre[1:])
			}
			if again, err := s.ExpireJobs(store.KindPreRecorded, store.Cutoff{Before: cut}, 100); err != nil || len(again) != 0 {
				t.Errorf("second ExpireJobs = %v, %v; want none", again, err)
			}
			if n, _ := s.CountJobs(store.KindPreRecorded, ""); n != 11 {
				t.Errorf("pre-recorded jobs after expiry: %d, want 11", n)
			}
			for _, id := range pre {
				if _, err := s.Job(id); !errors.Is(err, store.ErrNotFound) || blobExists(t, s, "blob-"+id) {
					t.Errorf("%s after expiry: %v, blob kept %t", id, err, blobExists(t, s, "blob-"+id))
				}
			}
			if _, err := s.Job("owed"); err != nil {
				t.Errorf("job with a pending delivery: %v, want kept", err)
			}
			if n, _ := s.CountJobs(store.KindLive, ""); n != 12 {
				t.Errorf("live jobs after expiring pre-recorded ones: %d, want 12", n)
			}
			if got, err := s.ExpireJobs(store.KindLive, store.Cutoff{Before: cut}, 100); err != nil || !slices.Equal(got, want[store.KindLive]) {
				t.Errorf("ExpireJobs(live) = %v, %v; want %v", got, err, want[store.KindLive])
			}
			if again, err := s.ExpireJobs(store.KindLive, store.Cutoff{Before: cut}, 100); err != nil || len(again) != 0 {
				t.Errorf("second ExpireJobs(live) = %v, %v; want none", again, err)
			}
			if n, _ := s.CountJobs(store.KindLive, ""); n != 10 {
				t.Errorf("live jobs after expiry: %d, want 10", n)
			}
			for _, id := range want[store.KindLive] {
				if _, err := s.Job(id); !errors.Is(err, store.ErrNotFound) || blobExists(t, s, "blob-"+id) {
					t.Errorf("%s after expiry: %v, blob kept %t", id, err, blobExists(t, s, "blob-"+id))
				}
			}
			for _, tc := range []struct {
				kind  store.Kind
				limit int
			}{{store.KindLive, 0}, {"batch", 10}} {
				if _, err := s.ExpireJobs(tc.kind, store.Cutoff{Before: cut}, tc.limit); !errors.Is(err, store.ErrInvalid) {
					t.Errorf("ExpireJobs(%s, %d) = %v, want ErrInvalid", tc.kind, tc.limit, err)
				}
			}
		}},
		{"ExpireUploads", func(t *testing.T, s store.Store) {
			cut := t0
			ups := []struct {
				id      string
				created time.Time
				expire  bool
			}{
				{"u-new", cut.Add(time.Minute), false},
				{"u-old2", cut.Add(-time.Hour), true},
				{"u-edge", cut, false},
				{"u-old1", cut.Add(-2 * time.Hour), true},
			}
			for _, u := range ups {
				writeBlob(t, s, "up-"+u.id, "audio")
				if err := s.PutUpload(&store.Upload{ID: u.id, Account: "acme", CreatedAt: u.created, Blob: "up-" + u.id}); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.LinkBlob("up-u-old1", "job-from-upload"); err != nil {
				t.Fatal(err)
			}
			if got, err := s.ExpireUploads(store.Cutoff{Before: cut}, 1); err != nil || !slices.Equal(got, []string{"u-old1"}) {
				t.Fatalf("ExpireUploads(limit 1) = %v, %v; want u-old1", got, err)
			}
			if got, err := s.ExpireUploads(store.Cutoff{Before: cut}, 100); err != nil || !slices.Equal(got, []string{"u-old2"}) {
				t.Fatalf("ExpireUploads = %v, %v; want u-old2", got, err)
			}
			for _, u := range ups {
				_, err := s.Upload(u.id)
				gone := errors.Is(err, store.ErrNotFound)
				if gone != u.expire || blobExists(t, s, "up-"+u.id) == u.expire {
					t.Errorf("%s: record %v, blob kept %t; want expired %t", u.id, err, blobExists(t, s, "up-"+u.id), u.expire)
				}
			}
			if got := readBlob(t, s, "job-from-upload"); got != "audio" {
				t.Errorf("a job's link to an expired upload's audio = %q", got)
			}
			if _, err := s.ExpireUploads(store.Cutoff{Before: cut}, 0); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("ExpireUploads(limit 0) = %v, want ErrInvalid", err)
			}
		}},
		{"ExpirePerAccount", func(t *testing.T, s store.Store) {
			// Each account's cut (retention.accounts): "keep" never
			// expires, "long" keeps more than the default, "short" less,
			// "acme" has the default's.
			cut := store.Cutoff{Before: t0, Accounts: map[string]time.Time{
				"keep": {}, "long": t0.Add(-48 * time.Hour), "short": t0.Add(24 * time.Hour),
			}}
			var want []string
			for _, acct := range []string{"acme", "keep", "long", "short"} {
				for _, age := range []time.Duration{-72 * time.Hour, -time.Hour, time.Hour} {
					id := fmt.Sprintf("%s%+d", acct, int(age.Hours()))
					created := t0.Add(age)
					mustCreate(t, s, newJob(id, acct, store.KindLive, store.StatusDone, created))
					if err := s.PutUpload(&store.Upload{ID: "u-" + id, Account: acct, CreatedAt: created}); err != nil {
						t.Fatal(err)
					}
					if cut.Expired(acct, created) {
						want = append(want, id)
					}
				}
			}
			slices.Sort(want)
			if len(want) != 6 { // acme-72 acme-1 long-72 short-72 short-1 short+1
				t.Fatalf("the cut expires %v, want six", want)
			}
			got, err := s.ExpireJobs(store.KindLive, cut, 100)
			slices.Sort(got)
			if err != nil || !slices.Equal(got, want) {
				t.Errorf("ExpireJobs(per account) = %v, %v; want %v", got, err, want)
			}
			ups, err := s.ExpireUploads(cut, 100)
			slices.Sort(ups)
			var wantUps []string
			for _, id := range want {
				wantUps = append(wantUps, "u-"+id)
			}
			if err != nil || !slices.Equal(ups, wantUps) {
				t.Errorf("ExpireUploads(per account) = %v, %v; want %v", ups, err, wantUps)
			}
			if got, err := s.ExpireJobs(store.KindLive, store.Cutoff{Accounts: map[string]time.Time{"keep": t0}}, 100); err != nil || !slices.Equal(got, []string{"keep-72", "keep-1"}) {
				t.Errorf("ExpireJobs(no default, one account) = %v, %v; want keep-72 keep-1", got, err)
			}
		}},
	}
}

// stored is the bytes a blob of n bytes takes on disk in s: n, or what a
// store that transforms blobs (store/sealed's encryption) says it takes.
func stored(s store.Store, n int64) int64 {
	if t, ok := s.(interface{ StoredSize(n int64) int64 }); ok {
		return t.StoredSize(n)
	}
	return n
}
