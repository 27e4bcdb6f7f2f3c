package memstore

import (
	"bytes"
	"cmp"
	"encoding/json"

	"fmt"
	"slices"
	"time"

	"github.com/earshot-dev/earshot/store"
)

// encode makes the record of j, which has been validated.
func encode(j *store.Job) (*record, error) {
	for _, raw := range []json.RawMessage{j.Params, j.Result} {
		if len(raw) > 0 && !json.Valid(raw) {
			return nil, fmt.Errorf("job %s: params or result is not valid JSON: %w", j.ID, store.ErrInvalid)
		}
	}
	head := *j
	head.Params, head.Result = nil, nil
	h, err := json.Marshal(&head)
	if err != nil {
		return nil, fmt.Errorf("job %s: encode: %v: %w", j.ID, err, store.ErrInvalid)
	}
	return &record{
		head: h, params: bytes.Clone(j.Params), result: bytes.Clone(j.Result),
		account: j.Account, kind: j.Kind, status: j.Status, created: enc(j.CreatedAt),
		inQueue: j.InQueue(), batchPass: j.BatchPass, blob: j.Blob, held: j.Held(),
	}, nil
}

// job decodes the record into a job of the caller's own.
func (r *record) job() (*store.Job, error) {
	j := new(store.Job)
	if err := store.DecodeJobHead(r.head, j); err != nil {
		return nil, err
	}
	j.Params, j.Result = nil, nil
	if len(r.params) > 0 {
		j.Params = bytes.Clone(r.params)
	}
	if len(r.result) > 0 {
		j.Result = bytes.Clone(r.result)
	}
	return j, nil
}

// entry is one job in an index's order: CreatedAt, then id.
type entry struct {
	id string
	r  *record
}

// ordered lists the jobs match accepts, oldest first. The caller holds mu.
func (s *Store) ordered(match func(*record) bool) []entry {
	var out []entry
	for id, r := range s.jobs {
		if match(r) {
			out = append(out, entry{id, r})
		}
	}
	slices.SortFunc(out, func(a, b entry) int {
		return cmp.Or(cmp.Compare(a.r.created, b.r.created), cmp.Compare(a.id, b.id))
	})
	return out
}

// mustJob decodes a record the store wrote; the caller holds mu.
func (s *Store) mustJob(id string) (*store.Job, error) {
	r, ok := s.jobs[id]
	if !ok {
		return nil, fmt.Errorf("job %s: %w", id, store.ErrNotFound)
	}
	return r.job()
}

// put writes j (validated) with the deliveries ds enqueued beside it, all
// or nothing. The caller holds mu.
func (s *Store) put(j *store.Job, ds []*store.Delivery) error {
	rec, err := encode(j)
	if err != nil {
		return err
	}
	prepared := make([]store.Delivery, 0, len(ds))
	for _, d := range ds {
		if d == nil {
			continue
		}
		d.OwnedBy(j)
		if err := store.PrepareDelivery(d); err != nil {
			return err
		}
		if _, ok := s.delivery[d.ID]; ok || slices.ContainsFunc(prepared, func(p store.Delivery) bool { return p.ID == d.ID }) {
			return fmt.Errorf("delivery %s: %w", d.ID, store.ErrExists)
		}
		prepared = append(prepared, cloneDelivery(*d))
	}
	s.jobs[j.ID] = rec
	for _, d := range prepared {
		s.delivery[d.ID] = d
	}
	return nil
}

// CreateJob is store.DB.CreateJob.
func (s *Store) CreateJob(j *store.Job) error {
	if j == nil {
		return fmt.Errorf("memstore: create job: nil: %w", store.ErrInvalid)
	}
	rec := j.Clone()
	rec.CreatedAt = rec.CreatedAt.UTC()
	rec.CompletedAt = rec.CompletedAt.UTC()
	if err := rec.Validate(); err != nil {
		return fmt.Errorf("memstore: create job: %w", err)
	}
	if err := s.lock("CreateJob"); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if _, ok := s.jobs[rec.ID]; ok {
		return fmt.Errorf("memstore: create job %s: %w", rec.ID, store.ErrExists)
	}
	if err := s.put(rec, nil); err != nil {
		return fmt.Errorf("memstore: create job: %w", err)
	}
	return nil
}

// Job is store.DB.Job.
func (s *Store) Job(id string) (*store.Job, error) {
	if err := s.lock("Job"); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	j, err := s.mustJob(id)
	if err != nil {
		return nil, fmt.Errorf("memstore: %w", err)
	}
	return j, nil
}

// UpdateJob is store.DB.UpdateJob: fn runs under the store's mutex, so it
// must not call the store.
func (s *Store) UpdateJob(id string, fn func(j *store.Job) ([]*store.Delivery, error)) (*store.Job, error) {
	if err := s.lock("UpdateJob"); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	old, err := s.mustJob(id)
	if err != nil {
		return nil, fmt.Errorf("memstore: update job: %w", err)
	}
	j := old.Clone()
	ds, err := fn(j)
	if err != nil {
		return nil, err
	}
	j.CreatedAt = j.CreatedAt.UTC()
	j.CompletedAt = j.CompletedAt.UTC()
	if j.ID != old.ID || j.Account != old.Account || j.Kind != old.Kind || !j.CreatedAt.Equal(old.CreatedAt) {
		return nil, fmt.Errorf("memstore: update job %s: changed id, account, kind or created_at: %w", id, store.ErrInvalid)
	}
	if err := j.Validate(); err != nil {
		return nil, fmt.Errorf("memstore: update job: %w", err)
	}
	if err := s.put(j, ds); err != nil {
		return nil, fmt.Errorf("memstore: update job: %w", err)
	}
	return j.Clone(), nil
}

// DeleteJob is store.DB.DeleteJob: the job, its pending deliveries, then
// its blob.
func (s *Store) DeleteJob(id string) error {
	if err := s.lock("DeleteJob"); err != nil {
		return err
	}
	defer s.mu.Unlock()
	return s.deleteJob(id)
}

// deleteJob removes the job id; the caller holds mu.
func (s *Store) deleteJob(id string) error {
	r, ok := s.jobs[id]
	if !ok {
		return fmt.Errorf("memstore: delete job %s: %w", id, store.ErrNotFound)
	}
	if r.held {
		return fmt.Errorf("memstore: delete job %s: %w", id, store.ErrHeld)
	}
	delete(s.jobs, id)
	for did, d := range s.delivery {
		if d.JobID == id {
			delete(s.delivery, did)
			delete(s.leases, did)
		}
	}
	if r.blob != "" && store.ValidName(r.blob) {
		delete(s.blobs, r.blob)
	}
	return nil
}

// ListJobs is store.DB.ListJobs.
func (s *Store) ListJobs(q store.ListQuery) ([]*store.Job, error) {
	return store.CollectJobs(q, s.EachJob)
}

// EachJob is store.DB.EachJob: newest first. The matching jobs are read
// under the mutex, then fn is called without it.
func (s *Store) EachJob(q store.ListQuery, fn func(*store.Job) bool) error {
	if err := q.Check(); err != nil {
		return fmt.Errorf("memstore: %w", err)
	}
	if err := s.lock("EachJob"); err != nil {
		return err
	}
	es := s.ordered(func(r *record) bool { return r.account == q.Account && r.kind == q.Kind })
	var out []*store.Job
	skip := q.Offset
	for i := len(es) - 1; i >= 0; i-- {
		e := es[i]
		if !q.Before.IsZero() {
			b := enc(q.Before)
			if e.r.created > b || e.r.created == b && e.id >= q.BeforeID {
				continue
			}
		}
		if !q.After.IsZero() && e.r.created <= enc(q.After) {
			break
		}
		if len(q.Statuses) > 0 && !slices.Contains(q.Statuses, e.r.status) {
			continue
		}
		j, err := e.r.job()
		if err != nil {
			s.mu.Unlock()
			return fmt.Errorf("memstore: list jobs: %w", err)
		}
		if len(q.Metadata) > 0 && !store.MetadataMatches(j.CustomMetadata, q.Metadata) {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		out = append(out, j)
		if q.Limit > 0 && len(out) == q.Limit {
			break
		}
	}
	s.mu.Unlock()
	for _, j := range out {
		if !fn(j) {
			break
		}
	}
	return nil
}

// CountJobs is store.DB.CountJobs: status "" counts every status.
func (s *Store) CountJobs(kind store.Kind, status store.Status) (int, error) {
	if err := s.lock("CountJobs"); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.jobs {
		if r.kind == kind && (status == "" || r.status == status) {
			n++
		}
	}
	return n, nil
}

// ExpireJobs is store.DB.ExpireJobs.
func (s *Store) ExpireJobs(kind store.Kind, cut store.Cutoff, limit int) ([]string, error) {
	if !kind.Valid() || limit <= 0 {
		return nil, fmt.Errorf("memstore: expire jobs: kind %q limit %d: %w", kind, limit, store.ErrInvalid)
	}
	if err := s.lock("ExpireJobs"); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	owed := map[string]bool{}
	for _, d := range s.delivery {
		owed[d.JobID] = true
	}
	es := s.ordered(func(r *record) bool {
		return r.kind == kind && (r.status == store.StatusDone || r.status == store.StatusError) && r.created < enc(cut.For(r.account))
	})
	var deleted []string
	for _, e := range es {
		if len(deleted) == limit {
			break
		}
		if owed[e.id] || s.jobs[e.id].held {
			continue
		}
		if err := s.deleteJob(e.id); err != nil {
			return deleted, err
		}
		deleted = append(deleted, e.id)
	}
	return deleted, nil
}

// The queue.

// ClaimNext is store.DB.ClaimNext.
func (s *Store) ClaimNext(kind store.Kind) (*store.Job, error) { return s.claim(kind, nil) }

// ClaimNextAfter is store.DB.ClaimNextAfter: turns between accounts.
func (s *Store) ClaimNextAfter(kind store.Kind, after string) (*store.Job, error) {
	return s.claim(kind, &after)
}

func (s *Store) claim(kind store.Kind, after *string) (*store.Job, error) {
	if !kind.Valid() {
		return nil, fmt.Errorf("memstore: claim: kind %q: %w", kind, store.ErrInvalid)
	}
	if kind == store.KindLive {
		return nil, fmt.Errorf("memstore: claim %s: %w", kind, store.ErrEmpty)
	}
	if err := s.lock("ClaimNext"); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	queue := s.ordered(func(r *record) bool { return r.kind == kind && r.inQueue })
	if len(queue) == 0 {
		return nil, fmt.Errorf("memstore: claim %s: %w", kind, store.ErrEmpty)
	}
	pick := queue[0]
	if after != nil {
		var first, next *entry
		for i := range queue {
			e := &queue[i]
			if first == nil || e.r.account < first.r.account {
				first = e
			}
			if e.r.account > *after && (next == nil || e.r.account < next.r.account) {
				next = e
			}
		}
		pick = *cmp.Or(next, first)
	}
	j, err := pick.r.job()
	if err != nil {
		return nil, fmt.Errorf("memstore: claim %s: %w", kind, err)
	}
	j.Status = store.StatusProcessing
	j.Attempts++
	if err := s.put(j, nil); err != nil {
		return nil, fmt.Errorf("memstore: claim %s: %w", kind, err)
	}
	return j, nil
}

// AwaitingAudio is store.DB.AwaitingAudio: oldest first.
func (s *Store) AwaitingAudio() ([]*store.Job, error) {
	if err := s.lock("AwaitingAudio"); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	var out []*store.Job
	for _, e := range s.ordered(func(r *record) bool {
		return r.kind == store.KindPreRecorded && r.status == store.StatusQueued
	}) {
		j, err := e.r.job()
		if err != nil {
			return nil, fmt.Errorf("memstore: jobs awaiting audio: %w", err)
		}
		if j.AwaitingAudio {
			out = append(out, j)
		}
	}
	return out, nil
}

// ClaimBatchPass is store.DB.ClaimBatchPass.
func (s *Store) ClaimBatchPass() (*store.Job, error) {
	if err := s.lock("ClaimBatchPass"); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	es := s.ordered(func(r *record) bool { return r.kind == store.KindLive && r.batchPass == store.BatchPassQueued })
	if len(es) == 0 {
		return nil, fmt.Errorf("memstore: claim batch pass: %w", store.ErrEmpty)
	}
	j, err := es[0].r.job()
	if err != nil {
		return nil, fmt.Errorf("memstore: claim batch pass: %w", err)
	}
	j.BatchPass = store.BatchPassRunning
	j.Attempts++
	if err := s.put(j, nil); err != nil {
		return nil, fmt.Errorf("memstore: claim batch pass: %w", err)
	}
	return j, nil
}

// PendingBatchPasses is store.DB.PendingBatchPasses.
func (s *Store) PendingBatchPasses() (int, error) {
	if err := s.lock("PendingBatchPasses"); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	return len(s.ordered(func(r *record) bool { return r.kind == store.KindLive && r.batchPass != "" })), nil
}

// Recover is store.DB.Recover, in one step under the mutex.
func (s *Store) Recover(o store.RecoverOptions) (store.RecoverReport, error) {
	if err := s.lock("Recover"); err != nil {
		return store.RecoverReport{}, err
	}
	defer s.mu.Unlock()
	var rep store.RecoverReport
	var writes []*store.Job
	for _, e := range s.ordered(func(r *record) bool {
		return r.kind == store.KindPreRecorded && r.status == store.StatusProcessing
	}) {
		if o.Crashed {
			rep.Suspects = append(rep.Suspects, e.id)
			continue
		}
		j, err := e.r.job()
		if err != nil {
			return store.RecoverReport{}, fmt.Errorf("memstore: recover: %w", err)
		}
		j.Status = store.StatusQueued
		writes = append(writes, j)
		rep.Requeued = append(rep.Requeued, e.id)
	}
	for _, e := range s.ordered(func(r *record) bool {
		return r.kind == store.KindLive && (r.status == store.StatusQueued || r.status == store.StatusProcessing)
	}) {
		rep.Live = append(rep.Live, e.id)
	}
	for _, e := range s.ordered(func(r *record) bool { return r.kind == store.KindLive && r.batchPass == store.BatchPassRunning }) {
		j, err := e.r.job()
		if err != nil {
			return store.RecoverReport{}, fmt.Errorf("memstore: recover: %w", err)
		}
		j.BatchPass = store.BatchPassQueued
		writes = append(writes, j)
		rep.BatchPasses = append(rep.BatchPasses, e.id)
	}
	for _, j := range writes {
		if err := s.put(j, nil); err != nil {
			return store.RecoverReport{}, fmt.Errorf("memstore: recover: %w", err)
		}
	}
	return rep, nil
}

// Deliveries.

func cloneDelivery(d store.Delivery) store.Delivery {
	d.Body = bytes.Clone(d.Body)
	return d
}

// dueOrder sorts deliveries as the due index does: NextAttempt, then id.
func dueOrder(a, b store.Delivery) int {
	return cmp.Or(cmp.Compare(enc(a.NextAttempt), enc(b.NextAttempt)), cmp.Compare(a.ID, b.ID))
}

// EnqueueDelivery is store.DB.EnqueueDelivery: d's defaults are filled in
// place.
func (s *Store) EnqueueDelivery(d *store.Delivery) error {
	if d == nil {
		return fmt.Errorf("memstore: enqueue delivery: nil: %w", store.ErrInvalid)
	}
	if err := store.PrepareDelivery(d); err != nil {
		return fmt.Errorf("memstore: enqueue delivery: %w", err)
	}
	if err := s.lock("EnqueueDelivery"); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if _, ok := s.delivery[d.ID]; ok {
		return fmt.Errorf("memstore: enqueue delivery %s: %w", d.ID, store.ErrExists)
	}
	s.delivery[d.ID] = cloneDelivery(*d)
	return nil
}

// due lists the deliveries due at now, in due order; the caller holds mu.
func (s *Store) due(now time.Time) []store.Delivery {
	var out []store.Delivery
	for _, d := range s.delivery {
		if enc(d.NextAttempt) <= enc(now) {
			out = append(out, cloneDelivery(d))
		}
	}
	slices.SortFunc(out, dueOrder)
	return out
}

// DueDeliveries is store.DB.DueDeliveries.
func (s *Store) DueDeliveries(now time.Time, limit int) ([]*store.Delivery, error) {
	if err := s.lock("DueDeliveries"); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	var out []*store.Delivery
	for _, d := range s.due(now) {
		out = append(out, &d)
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out, nil
}

// ClaimDeliveries is store.DB.ClaimDeliveries: each due delivery is leased
// for store.DeliveryLease.
func (s *Store) ClaimDeliveries(now time.Time, limit int) ([]*store.Delivery, error) {
	if err := s.lock("ClaimDeliveries"); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	var out []*store.Delivery
	for _, d := range s.due(now) {
		if until, held := s.leases[d.ID]; held && until.After(now) {
			continue
		}
		s.leases[d.ID] = now.Add(store.DeliveryLease)
		out = append(out, &d)
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out, nil
}

// NextDelivery is store.DB.NextDelivery: the earliest time a delivery is
// due and not leased.
func (s *Store) NextDelivery() (time.Time, bool, error) {
	if err := s.lock("NextDelivery"); err != nil {
		return time.Time{}, false, err
	}
	defer s.mu.Unlock()
	var next time.Time
	ok := false
	for _, d := range s.delivery {
		at := d.NextAttempt
		if lease := s.leases[d.ID]; lease.After(at) {
			at = lease
		}
		if !ok || at.Before(next) {
			next, ok = at, true
		}
	}
	return next, ok, nil
}

// RescheduleDelivery is store.DB.RescheduleDelivery: its lease ends.
func (s *Store) RescheduleDelivery(id string, next time.Time, lastErr string) error {
	if err := s.lock("RescheduleDelivery"); err != nil {
		return err
	}
	defer s.mu.Unlock()
	d, ok := s.delivery[id]
	if !ok {
		return fmt.Errorf("memstore: reschedule delivery %s: %w", id, store.ErrNotFound)
	}
	delete(s.leases, id)
	d.Attempts++
	d.NextAttempt = next.UTC()
	d.LastError = lastErr
	s.delivery[id] = d
	return nil
}

// DeleteDelivery is store.DB.DeleteDelivery: a missing one is no error.
func (s *Store) DeleteDelivery(id string) error {
	if err := s.lock("DeleteDelivery"); err != nil {
		return err
	}
	defer s.mu.Unlock()
	delete(s.delivery, id)
	delete(s.leases, id)
	return nil
}

// PendingDeliveries is store.DB.PendingDeliveries.
func (s *Store) PendingDeliveries() (int, error) {
	if err := s.lock("PendingDeliveries"); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	return len(s.delivery), nil
}
