package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/store"
)

// auditCases are the audit trail's behaviour and the legal hold's.
func auditCases() []Case {
	return []Case{
		{"AuditChain", func(t *testing.T, s store.Store) {
			appendAudit(t, s, 3)
			appendAudit(t, s, 2)
			got := listAllAudit(t, s)
			if len(got) != 5 {
				t.Fatalf("ListAudit: %d entries, want 5", len(got))
			}
			verifyChain(t, s, got)
			if got[0].Prev != nil {
				t.Errorf("first entry's prev = %x, want none", got[0].Prev)
			}
			e := got[2]
			if e.KeyID != "k2" || e.Account != "acme" || e.Source != "10.0.0.2:5000" || e.Action != store.AuditPreRecordedRead ||
				e.Object != "job-2" || e.Status != 200 || !e.At.Equal(t0.Add(2*time.Second)) || e.At.Location() != time.UTC {
				t.Errorf("entry 3 read back as %+v", e)
			}
			// An edited copy no longer verifies.
			e.Object = "job-x"
			if err := store.VerifyAuditLink(got[1].Seq, got[1].Hash, e); !errors.Is(err, store.ErrAuditBroken) {
				t.Errorf("edited entry verifies: %v", err)
			}
		}},
		{"AuditRefusesInvalid", func(t *testing.T, s store.Store) {
			long := string(make([]byte, 513))
			for _, e := range []*store.AuditEntry{{}, {Action: "x", Object: long}, {Action: "x", Object: "a\xff"}, {Action: "x", Source: "a\x00b"}} {
				if err := s.AppendAudit(&store.AuditEntry{Action: store.AuditKeyCreate}, e); !errors.Is(err, store.ErrInvalid) {
					t.Errorf("AppendAudit(%+v) = %v, want ErrInvalid", e, err)
				}
			}
			if got := listAllAudit(t, s); len(got) != 0 {
				t.Errorf("a refused append stored %d entries", len(got))
			}
			if _, err := s.ListAudit(store.AuditQuery{Limit: 0}); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("ListAudit(limit 0) = %v, want ErrInvalid", err)
			}
		}},
		{"AuditList", func(t *testing.T, s store.Store) {
			appendAudit(t, s, 10) // entry i: account acme/other alternating, object job-i, at t0+i s
			seqs := func(q store.AuditQuery) []uint64 {
				t.Helper()
				if q.Limit == 0 {
					q.Limit = 100
				}
				es, err := s.ListAudit(q)
				if err != nil {
					t.Fatalf("ListAudit(%+v): %v", q, err)
				}
				var out []uint64
				for _, e := range es {
					out = append(out, e.Seq)
				}
				return out
			}
			for _, c := range []struct {
				name string
				q    store.AuditQuery
				want []uint64
			}{
				{"all", store.AuditQuery{}, []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
				{"newest", store.AuditQuery{Newest: true, Limit: 3}, []uint64{10, 9, 8}},
				{"page 2", store.AuditQuery{Newest: true, Offset: 3, Limit: 3}, []uint64{7, 6, 5}},
				{"account", store.AuditQuery{Account: "other"}, []uint64{2, 4, 6, 8, 10}},
				{"account newest paged", store.AuditQuery{Account: "other", Newest: true, Offset: 1, Limit: 2}, []uint64{8, 6}},
				{"object", store.AuditQuery{Object: "job-3"}, []uint64{4}},
				{"action", store.AuditQuery{Action: store.AuditPreRecordedDelete}, []uint64{6}},
				{"since until", store.AuditQuery{Since: t0.Add(3 * time.Second), Until: t0.Add(6 * time.Second)}, []uint64{4, 5, 6}},
				{"after seq", store.AuditQuery{AfterSeq: 8}, []uint64{9, 10}},
				{"after seq newest", store.AuditQuery{AfterSeq: 8, Newest: true}, []uint64{10, 9}},
				{"none", store.AuditQuery{Account: "nobody"}, nil},
			} {
				if got := seqs(c.q); !slices.Equal(got, c.want) {
					t.Errorf("%s: %v, want %v", c.name, got, c.want)
				}
			}
		}},
		{"AuditExpire", func(t *testing.T, s store.Store) {
			appendAudit(t, s, 10)
			all := listAllAudit(t, s)
			// By age: entries at t0+0..4 s are older than t0+5 s; limit 3 first.
			if n, err := s.ExpireAudit(t0.Add(5*time.Second), 0, 3); err != nil || n != 3 {
				t.Fatalf("ExpireAudit(limit 3) = %d, %v; want 3", n, err)
			}
			if n, err := s.ExpireAudit(t0.Add(5*time.Second), 0, 100); err != nil || n != 2 {
				t.Fatalf("ExpireAudit = %d, %v; want 2", n, err)
			}
			checkAnchor(t, s, all[4])
			// By count: keep the newest 3 of the 5 left.
			if n, err := s.ExpireAudit(time.Time{}, 3, 100); err != nil || n != 2 {
				t.Fatalf("ExpireAudit(max 3) = %d, %v; want 2", n, err)
			}
			checkAnchor(t, s, all[6])
			if n, err := s.ExpireAudit(time.Time{}, 3, 100); err != nil || n != 0 {
				t.Errorf("ExpireAudit again = %d, %v; want 0", n, err)
			}
			kept := listAllAudit(t, s)
			if len(kept) != 3 || kept[0].Seq != 8 {
				t.Fatalf("kept %d entries from %d, want 3 from 8", len(kept), kept[0].Seq)
			}
			// Everything out: the next append follows the anchor.
			if n, err := s.ExpireAudit(t0.Add(time.Hour), 0, 100); err != nil || n != 3 {
				t.Fatalf("ExpireAudit(all) = %d, %v; want 3", n, err)
			}
			checkAnchor(t, s, all[9])
			appendAudit(t, s, 1)
			verifyChain(t, s, listAllAudit(t, s))
			if _, err := s.ExpireAudit(time.Time{}, 0, 0); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("ExpireAudit(limit 0) = %v, want ErrInvalid", err)
			}
		}},
		{"AuditConcurrentAppends", func(t *testing.T, s store.Store) {
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					for range 10 {
						if err := s.AppendAudit(&store.AuditEntry{Action: store.AuditLiveRead}, &store.AuditEntry{Action: store.AuditLiveAudio}); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			got := listAllAudit(t, s)
			if len(got) != 160 {
				t.Fatalf("%d entries, want 160", len(got))
			}
			verifyChain(t, s, got)
		}},
		{"HeldJob", func(t *testing.T, s store.Store) {
			for _, id := range []string{"held", "free"} {
				mustCreate(t, s, newJob(id, "acme", store.KindPreRecorded, store.StatusDone, t0.Add(-48*time.Hour)))
			}
			hold := func(at time.Time) store.UpdateFunc {
				return func(j *store.Job) ([]*store.Delivery, error) {
					j.HeldAt, j.HeldBy = at, "adminkey"
					return nil, nil
				}
			}
			if _, err := s.UpdateJob("held", hold(t0)); err != nil {
				t.Fatal(err)
			}
			j, err := s.Job("held")
			if err != nil || !j.Held() || !j.HeldAt.Equal(t0) || j.HeldBy != "adminkey" {
				t.Fatalf("held job read back: %+v, %v", j, err)
			}
			got, err := s.ExpireJobs(store.KindPreRecorded, store.Cutoff{Before: t0}, 100)
			if err != nil || !slices.Equal(got, []string{"free"}) {
				t.Errorf("ExpireJobs = %v, %v; want [free], the held job kept", got, err)
			}
			if err := s.DeleteJob("held"); !errors.Is(err, store.ErrHeld) {
				t.Errorf("DeleteJob(held) = %v, want ErrHeld", err)
			}
			if _, err := s.Job("held"); err != nil {
				t.Errorf("held job after a refused delete: %v", err)
			}
			if _, err := s.UpdateJob("held", hold(time.Time{})); err != nil {
				t.Fatal(err)
			}
			got, err = s.ExpireJobs(store.KindPreRecorded, store.Cutoff{Before: t0}, 100)
			if err != nil || !slices.Equal(got, []string{"held"}) {
				t.Errorf("ExpireJobs after release = %v, %v; want [held]", got, err)
			}
		}},
	}
}

// appendAudit appends n entries in one call, continuing the pattern of
// those already kept: entry number i (from 0 over the whole trail) is by
// key k<i>, account acme for even i and other for odd, on job-<i>, at t0+i
// seconds; entry 5 is a delete, the others reads.
func appendAudit(t testing.TB, s store.Store, n int) {
	t.Helper()
	base := len(listAllAudit(t, s))
	if a, err := s.AuditAnchor(); err == nil {
		base += int(a.Seq)
	}
	es := make([]*store.AuditEntry, n)
	for j := range es {
		i := base + j
		acct, action := "acme", store.AuditPreRecordedRead
		if i%2 == 1 {
			acct = "other"
		}
		if i == 5 {
			action = store.AuditPreRecordedDelete
		}
		es[j] = &store.AuditEntry{At: t0.Add(time.Duration(i) * time.Second), KeyID: fmt.Sprintf("k%d", i), Account: acct,
			Source: fmt.Sprintf("10.0.0.%d:5000", i), Action: action, Object: fmt.Sprintf("job-%d", i), Status: 200}
	}
	if err := s.AppendAudit(es...); err != nil {
		t.Fatalf("AppendAudit: %v", err)
	}
	for j, e := range es {
		if e.Seq != uint64(base+j+1) || len(e.Hash) != 32 {
			t.Errorf("appended entry %d: seq %d hash %x", j, e.Seq, e.Hash)
		}
	}
}

func listAllAudit(t testing.TB, s store.Store) []*store.AuditEntry {
	t.Helper()
	es, err := s.ListAudit(store.AuditQuery{Limit: store.MaxAuditPage})
	if err != nil {
		t.Fatalf("ListAudit: %v", err)
	}
	return es
}

// verifyChain checks es, the whole kept trail, link by link from the anchor.
func verifyChain(t testing.TB, s store.Store, es []*store.AuditEntry) {
	t.Helper()
	a, err := s.AuditAnchor()
	if err != nil {
		t.Fatal(err)
	}
	seq, hash := a.Seq, a.Hash
	for _, e := range es {
		if err := store.VerifyAuditLink(seq, hash, e); err != nil {
			t.Fatal(err)
		}
		seq, hash = e.Seq, e.Hash
	}
}

func checkAnchor(t testing.TB, s store.Store, last *store.AuditEntry) {
	t.Helper()
	a, err := s.AuditAnchor()
	if err != nil || a.Seq != last.Seq || !slices.Equal(a.Hash, last.Hash) {
		t.Fatalf("AuditAnchor = %d %x, %v; want %d %x", a.Seq, a.Hash, err, last.Seq, last.Hash)
	}
	verifyChain(t, s, listAllAudit(t, s))
}
