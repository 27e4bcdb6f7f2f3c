package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/earshot-dev/earshot/callback"
	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/storetest/memstore"
)

var discard = slog.New(slog.DiscardHandler)

// waitJob waits, without polling on a timer, until the job is no longer
// queued or processing (jobEnds wakes at every end), and returns it.
func waitJob(t *testing.T, d *Daemon, id string) *store.Job {
	t.Helper()
	for {
		woken := d.ends.wait()
		j, err := d.db.Job(id)
		if err != nil {
			t.Fatal(err)
		}
		if j.Status == store.StatusDone || j.Status == store.StatusError {
			return j
		}
		select {
		case <-woken:
		case <-t.Context().Done():
			t.Fatalf("job %s still %s", id, j.Status)
		}
	}
}

// callbackEvents lists the events of the deliveries queued for job id.
func callbackEvents(t *testing.T, db store.Store, id string) []callback.Body {
	t.Helper()
	ds, err := db.DueDeliveries(time.Now().Add(time.Hour), 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []callback.Body
	for _, d := range ds {
		if d.JobID != id {
			continue
		}
		var b callback.Body
		if err := json.Unmarshal(d.Body, &b); err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// TestWorkerTranscribesJob: a worker claims a queued job made from an
// upload of real speech, decodes it with the real engine and stores it
// done with its transcript, file details and run metadata, its callback
// queued in the same commit; the worker returns when its context ends.
func TestWorkerTranscribesJob(t *testing.T) {
	d, db := newTestDaemon(t, nil)
	up := uploadSpeech(t, d, "acme")
	job, err := d.CreatePreRecorded(t.Context(), "acme", "r", []byte(`{"audio_url":"`+fileURL(up.ID)+`","callback_url":"http://127.0.0.1:1/hook"}`))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() { d.runWorker(ctx, 0) })
	got := waitJob(t, d, job.ID)
	cancel()
	wg.Wait()

	if got.Status != store.StatusDone {
		t.Fatalf("status %s: %d %s", got.Status, got.ErrorCode, got.ErrorMessage)
	}
	var res struct {
		Transcription struct {
			FullTranscript string `json:"full_transcript"`
		}
	}
	if err := json.Unmarshal(got.Result, &res); err != nil {
		t.Fatal(err)
	}
	// LJ001-0001: "Printing, in the only sense with which we are at present concerned..."
	if !strings.Contains(strings.ToLower(res.Transcription.FullTranscript), "only sense") {
		t.Errorf("transcript %q", res.Transcription.FullTranscript)
	}
	switch {
	case got.Attempts != 1 || got.PostSessionMetadata["attempts"] != json.Number("1") && got.PostSessionMetadata["attempts"] != 1.0:
		t.Errorf("attempts %d, metadata %v", got.Attempts, got.PostSessionMetadata["attempts"])
	case got.PostSessionMetadata["engine"] == nil:
		t.Errorf("no engine in %v", got.PostSessionMetadata)
	case got.File == nil || got.File.AudioDuration == nil || *got.File.AudioDuration < 1 || *got.File.Channels != 1:
		t.Errorf("file %+v", got.File)
	case got.CompletedAt.IsZero() || got.Blob != jobBlob(job.ID):
		t.Errorf("completed %v blob %q", got.CompletedAt, got.Blob)
	}
	if evs := callbackEvents(t, db, job.ID); len(evs) != 1 || evs[0].Event != "transcription.success" {
		t.Errorf("callbacks %+v", evs)
	}
	if _, ok := db.Blob(got.Blob); !ok {
		t.Error("a done job's audio is gone")
	}
}

// queueJob stores a queued pre-recorded job of account created at the
// given offset, with audio, and returns its id.
func queueJob(t *testing.T, db store.Store, id, account string, at int) {
	t.Helper()
	j := &store.Job{ID: id, Account: account, Kind: store.KindPreRecorded, Status: store.StatusQueued,
		CreatedAt: time.Date(2026, 1, 1, 0, 0, at, 0, time.UTC), Blob: jobBlob(id), Params: json.RawMessage(`{"audio_url":"http://x/a.wav"}`)}
	if err := db.CreateJob(j); err != nil {
		t.Fatal(err)
	}
}

// TestClaimTurns: pre-recorded claims take turns between accounts, so one
// account's backlog does not hold the rest back, and take no batch pass;
// batch passes are claimed from their own queue (claimBatchPass), in
// order, so a run of them holds no job back either.
func TestClaimTurns(t *testing.T) {
	d, db := newTestDaemon(t, nil)
	queueJob(t, db, "a1", "acme", 1)
	queueJob(t, db, "a2", "acme", 2)
	queueJob(t, db, "a3", "acme", 3)
	queueJob(t, db, "b1", "beta", 4)
	for i, id := range []string{"l1", "l2"} {
		if err := db.CreateJob(&store.Job{ID: id, Account: "zed", Kind: store.KindLive, Status: store.StatusDone,
			CreatedAt: time.Date(2026, 1, 1, 0, 0, i, 0, time.UTC), BatchPass: store.BatchPassQueued}); err != nil {
			t.Fatal(err)
		}
	}
	var jobs, passes []string
	for {
		j, err := d.claimJob()
		if errors.Is(err, store.ErrEmpty) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, j.ID)
	}
	for {
		j, gated, err := d.claimBatchPass()
		if errors.Is(err, store.ErrEmpty) {
			if gated {
				t.Error("an empty queue reported a gated batch pass")
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		passes = append(passes, j.ID)
	}
	if want := []string{"a1", "b1", "a2", "a3"}; fmt.Sprint(jobs) != fmt.Sprint(want) {
		t.Errorf("job claims %v, want %v", jobs, want)
	}
	if want := []string{"l1", "l2"}; fmt.Sprint(passes) != fmt.Sprint(want) {
		t.Errorf("batch pass claims %v, want %v", passes, want)
	}
	for _, id := range []string{"l1", "l2"} {
		if j, _ := db.Job(id); j.BatchPass != store.BatchPassRunning || j.Status != store.StatusDone {
			t.Errorf("%s: batch pass %q status %s", id, j.BatchPass, j.Status)
		}
	}
}

// TestFailJob: a failed job ends error with the contract's status and
// message of its cause, its audio removed (the record first), its error
// callback queued in the same commit, and WaitJob's waiters woken.
func TestFailJob(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cause  error
		status int
	}{
		{"poison", errPoisonJob, 500},
		{"too large", fmt.Errorf("decode: %w", errcode.ErrTooLarge), 413},
		{"cannot serve", newError(params.ErrCannotServe, nil, "audio_url: not audio"), 422},
		{"quota", newError(errcode.ErrQuota, nil, reasonQuota, 10), 507},
		{"internal", errors.New("decoder: secret detail"), 500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, db := newTestDaemon(t, nil)
			const id = "j1"
			queueJob(t, db, id, "acme", 1)
			if _, err := db.WriteBlob(jobBlob(id), strings.NewReader("audio"), 0); err != nil {
				t.Fatal(err)
			}
			if _, err := db.UpdateJob(id, func(j *store.Job) ([]*store.Delivery, error) {
				j.Params = json.RawMessage(`{"audio_url":"http://x/a.wav","callback_url":"http://127.0.0.1:1/cb"}`)
				return nil, nil
			}); err != nil {
				t.Fatal(err)
			}
			claim, err := db.ClaimNext(store.KindPreRecorded)
			if err != nil {
				t.Fatal(err)
			}
			woken := d.ends.wait()
			if err := d.failJob(discard, claim, tc.cause); err != nil {
				t.Fatal(err)
			}
			j, _ := db.Job(id)
			switch {
			case j.Status != store.StatusError || j.ErrorCode != tc.status || j.CompletedAt.IsZero():
				t.Errorf("status %s code %d, want error %d", j.Status, j.ErrorCode, tc.status)
			case j.ErrorMessage == "" || j.PostSessionMetadata["error"] != j.ErrorMessage:
				t.Errorf("message %q, metadata %v", j.ErrorMessage, j.PostSessionMetadata)
			case strings.Contains(j.ErrorMessage, "secret detail"):
				t.Errorf("an internal cause reached the client: %q", j.ErrorMessage)
			case j.Blob != "":
				t.Errorf("failed job names blob %q", j.Blob)
			}
			if _, ok := db.Blob(jobBlob(id)); ok {
				t.Error("failed job's audio kept")
			}
			evs := callbackEvents(t, db, id)
			if len(evs) != 1 || evs[0].Event != "transcription.error" {
				t.Fatalf("callbacks %+v", evs)
			}
			if p, _ := json.Marshal(evs[0].Payload); !strings.Contains(string(p), fmt.Sprintf(`"error_code":%d`, tc.status)) {
				t.Errorf("callback payload %s", p)
			}
			select {
			case <-woken:
			default:
				t.Error("waiters not woken")
			}
		})
	}
}

// TestFailJobClaimLost: the failure of a run whose claim was taken over
// (its lease ran out and another run claimed the job again) is dropped:
// the job, its audio and its callbacks belong to the run holding it now.
func TestFailJobClaimLost(t *testing.T) {
	db := memstore.New()
	d, _ := newTestDaemon(t, nil)
	d.db = db
	queueJob(t, db, "j1", "acme", 1)
	if _, err := db.WriteBlob(jobBlob("j1"), strings.NewReader("audio"), 0); err != nil {
		t.Fatal(err)
	}
	stale, _ := db.ClaimNext(store.KindPreRecorded)
	if _, err := db.UpdateJob("j1", func(j *store.Job) ([]*store.Delivery, error) {
		j.Attempts++ // claimed again by another run
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := d.failJob(discard, stale, errors.New("stale run failed")); err != nil {
		t.Fatal(err)
	}
	j, _ := db.Job("j1")
	if j.Status != store.StatusProcessing || j.Attempts != 2 || j.Blob == "" {
		t.Errorf("stale failure written: %s attempts %d blob %q", j.Status, j.Attempts, j.Blob)
	}
	if _, ok := db.Blob(jobBlob("j1")); !ok {
		t.Error("stale failure removed the audio the live run decodes")
	}
	res := &jobOutput{}
	if _, err := d.finishJob(j, stale, res, nil); !errors.Is(err, errClaimLost) {
		t.Errorf("finishJob of a stale claim: %v, want errClaimLost", err)
	}
}

// TestRunClaimGivesUp: a job started more than limits.max_attempts times
// without finishing ends error instead of running again.
func TestRunClaimGivesUp(t *testing.T) {
	d, db := newTestDaemon(t, func(c *Config) { c.Limits.MaxAttempts = 2 })
	queueJob(t, db, "j1", "acme", 1)
	var claim *store.Job
	for range 3 {
		var err error
		if claim, err = db.ClaimNext(store.KindPreRecorded); err != nil {
			t.Fatal(err)
		}
		if _, err := db.UpdateJob("j1", func(j *store.Job) ([]*store.Delivery, error) { j.Status = store.StatusQueued; return nil, nil }); err != nil {
			t.Fatal(err)
		}
	}
	claim.Status = store.StatusProcessing
	if _, err := db.UpdateJob("j1", func(j *store.Job) ([]*store.Delivery, error) { j.Status = store.StatusProcessing; return nil, nil }); err != nil {
		t.Fatal(err)
	}
	d.runClaim(t.Context(), t.Context(), discard, claim)
	j, _ := db.Job("j1")
	if j.Status != store.StatusError || j.ErrorCode != 500 || j.Attempts != 3 {
		t.Errorf("after %d attempts: %s %d %q", j.Attempts, j.Status, j.ErrorCode, j.ErrorMessage)
	}
}

// TestFailSuspects: after a crash of the process, the jobs it left
// processing end error (not retried: one may have caused the crash), each
// with the poison job's message; an id no longer stored is skipped.
func TestFailSuspects(t *testing.T) {
	d, db := newTestDaemon(t, nil)
	queueJob(t, db, "p1", "acme", 1)
	queueJob(t, db, "p2", "beta", 2)
	for range 2 {
		if _, err := db.ClaimNext(store.KindPreRecorded); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := db.Recover(store.RecoverOptions{Crashed: true})
	if err != nil || fmt.Sprint(rep.Suspects) != "[p1 p2]" {
		t.Fatalf("Recover = %+v, %v", rep, err)
	}
	d.failSuspects(append(rep.Suspects, "gone"))
	for _, id := range rep.Suspects {
		j, _ := db.Job(id)
		if j.Status != store.StatusError || j.ErrorCode != 500 || j.ErrorMessage != errcode.Message(errPoisonJob) {
			t.Errorf("%s: %s %d %q", id, j.Status, j.ErrorCode, j.ErrorMessage)
		}
	}
}

// TestUntilStored: a job's outcome the store refuses as unavailable (the
// database restarting) is tried again every storeRetry until it is taken;
// any other error, or the end of ctx, ends the wait.
func TestUntilStored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		down := 3
		calls := 0
		update := func() error {
			calls++
			if down > 0 {
				down--
				return fmt.Errorf("commit: %w", store.ErrUnavailable)
			}
			return nil
		}
		start := time.Now()
		if err := untilStored(t.Context(), update); err != nil || calls != 4 {
			t.Fatalf("untilStored = %v after %d calls", err, calls)
		}
		if waited := time.Since(start); waited != 3*storeRetry {
			t.Errorf("waited %s, want %s", waited, 3*storeRetry)
		}

		boom := errors.New("boom")
		if err := untilStored(t.Context(), func() error { return boom }); err != boom {
			t.Errorf("other error: %v", err)
		}

		ctx, cancel := context.WithTimeout(t.Context(), 2500*time.Millisecond)
		defer cancel()
		err := untilStored(ctx, func() error { return store.ErrUnavailable })
		if !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("at ctx's end: %v, want the store's error", err)
		}
	})
}

// TestFailJobRetryWhileUnavailable: a failure the store cannot take yet
// is retried with backoff until it is stored, not dropped with the job
// left processing.
func TestFailJobRetryWhileUnavailable(t *testing.T) {
	d, _ := newTestDaemon(t, nil)
	synctest.Test(t, func(t *testing.T) {
		db := memstore.New()
		d := &Daemon{db: db, log: discard, quota: d.quota, metrics: d.metrics, outbox: d.outbox}
		queueJob(t, db, "j1", "acme", 1)
		claim, _ := db.ClaimNext(store.KindPreRecorded)
		var mu sync.Mutex
		refused := 0
		db.Fault = func(op string) error {
			mu.Lock()
			defer mu.Unlock()
			if op == "UpdateJob" && refused < 4 {
				refused++
				return store.ErrUnavailable
			}
			return nil
		}
		start := time.Now()
		d.failJobRetry(t.Context(), discard, claim, errors.New("boom"))
		if j, _ := db.Job("j1"); j.Status != store.StatusError || refused != 4 {
			t.Errorf("status %s after %d refusals", j.Status, refused)
		}
		// Backoff 100, 200, 400, 800 ms.
		if waited := time.Since(start); waited != 1500*time.Millisecond {
			t.Errorf("waited %s", waited)
		}
	})
}
