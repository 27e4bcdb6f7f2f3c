package live

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/ingest"
	"github.com/earshot-dev/earshot/store"
)

// waitDone waits for the session's end, bounded by the test's deadline.
func waitDone(t *testing.T, sess ingest.Session) {
	t.Helper()
	select {
	case <-sess.Done():
	case <-t.Context().Done():
		t.Fatal("session did not end")
	}
}

// transcript reads a stored live result's full transcript.
func fullTranscript(t *testing.T, j *store.Job) string {
	t.Helper()
	var res struct {
		Transcription struct {
			FullTranscript string `json:"full_transcript"`
		}
	}
	if err := json.Unmarshal(j.Result, &res); err != nil {
		t.Fatalf("result %s: %v", j.Result, err)
	}
	return strings.ToLower(res.Transcription.FullTranscript)
}

// TestSessionLifecycle: a session created for POST /v2/live is stored
// queued with its token; a client attaching takes it processing; real
// speech written in 100 ms frames is transcribed; at stop the result and
// the recording are stored (the recording committed from its local file),
// the job is done, the client given the final transcript, the job service told once,
// and the session is gone from the service.
func TestSessionLifecycle(t *testing.T) {
	s, db, sig := testService(t, nil)
	_, key, err := db.CreateKey("acme", store.KeyGrant{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.CreateLive(t.Context(), "acme", key.ID, "req-1", []byte(`{"custom_metadata":{"team":"blue"}}`), "eu-west")
	if err != nil {
		t.Fatal(err)
	}
	j, err := db.Job(c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if j.Status != store.StatusQueued || j.Kind != store.KindLive || j.KeyID != key.ID || j.PostSessionMetadata["region"] != "eu-west" || c.Token == "" {
		t.Fatalf("created %+v token %q", j, c.Token)
	}
	if err := s.CheckToken(c.Token); err != nil {
		t.Fatalf("CheckToken: %v", err)
	}
	if err := s.CheckToken(c.Token + "x"); err == nil {
		t.Error("a tampered token checks")
	}
	l := &listener{}
	sess, err := s.AttachLive(t.Context(), c.Token, "127.0.0.1:1", l)
	if err != nil {
		t.Fatal(err)
	}
	pcm := speechPCM(t)
	for off := 0; off < len(pcm); off += 3200 {
		if err := sess.Write(t.Context(), pcm[off:min(off+3200, len(pcm))]); err != nil {
			t.Fatalf("write at %d: %v", off, err)
		}
	}
	if j, _ := db.Job(c.ID); j.Status != store.StatusProcessing {
		t.Errorf("attached session's job is %s", j.Status)
	}
	if err := sess.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitDone(t, sess)
	j, _ = db.Job(c.ID)
	if j.Status != store.StatusDone || j.CompletedAt.IsZero() {
		t.Fatalf("ended %s %d %q", j.Status, j.ErrorCode, j.ErrorMessage)
	}
	if got := fullTranscript(t, j); !strings.Contains(got, "sense") {
		t.Errorf("transcript %q", got)
	}
	rec, ok := db.Blob(j.Blob)
	if !ok || len(rec) < len(pcm) || string(rec[:4]) != "RIFF" {
		t.Errorf("recording %q: %d bytes, want a WAV of the %d bytes sent", j.Blob, len(rec), len(pcm))
	}
	msgs := l.all()
	if !slices.ContainsFunc(msgs, func(m string) bool { return strings.Contains(m, `"type":"post_final_transcript"`) }) {
		t.Errorf("no post_final_transcript among the client's %d messages", len(msgs))
	}

	sig.mu.Lock()
	finished := append([]store.Status(nil), sig.finished...)
	sig.mu.Unlock()
	if len(finished) != 1 || finished[0] != store.StatusDone {
		t.Errorf("job service told %v", finished)
	}
	if n := s.Sessions(); n != 0 {
		t.Errorf("%d sessions after the end", n)
	}
	if _, err := s.AttachLive(t.Context(), c.Token, "127.0.0.1:1", l); !errors.Is(err, errcode.ErrNotFound) {
		t.Errorf("attach to an ended session: %v", err)
	}
}

// TestCreateLiveAdmission: live.capacity, the account's session limit and
// the job service's storage quota refuse a session with the contract's
// error and store nothing; a bad region is a validation error; the
// shutdown admits no session.
func TestCreateLiveAdmission(t *testing.T) {
	one := 1
	s, db, sig := testService(t, func(c *Config) { c.Capacity = 2; c.MaxSessionsPerAccount = &one })
	count := func() int {
		n, _ := db.CountJobs(store.KindLive, "")
		return n
	}
	if _, err := s.CreateLive(t.Context(), "acme", "", "r", []byte(`{}`), "mars"); errcode.Status(err) != 400 {
		t.Errorf("bad region: %v (%d)", err, errcode.Status(err))
	}
	if _, err := s.CreateLive(t.Context(), "acme", "", "r", []byte(`{}`), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateLive(t.Context(), "acme", "", "r", []byte(`{}`), ""); !errors.Is(err, errcode.ErrLiveQuota) {
		t.Errorf("over the account's sessions: %v", err)
	}
	if _, err := s.CreateLive(t.Context(), "beta", "", "r", []byte(`{}`), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateLive(t.Context(), "gamma", "", "r", []byte(`{}`), ""); !errors.Is(err, ingest.ErrAtCapacity) || errcode.Status(err) != 503 {
		t.Errorf("over capacity: %v (%d)", err, errcode.Status(err))
	}
	sig.mu.Lock()
	sig.refuse = errcode.ErrQuota
	sig.mu.Unlock()
	if _, err := s.CreateLive(t.Context(), "delta", "", "r", []byte(`{}`), ""); !errors.Is(err, errcode.ErrQuota) {
		t.Errorf("over quota: %v", err)
	}
	if n := count(); n != 2 {
		t.Errorf("%d live jobs stored, want the 2 admitted", n)
	}
	if err := s.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	sig.mu.Lock()
	sig.refuse = nil
	sig.mu.Unlock()
	if _, err := s.CreateLive(t.Context(), "epsilon", "", "r", []byte(`{}`), ""); !errors.Is(err, ingest.ErrAtCapacity) {
		t.Errorf("during the shutdown: %v", err)
	}
	// Never connected: dropped at the shutdown, still queued with its
	// token for the next start.
	if jobs, _ := db.ListJobs(store.ListQuery{Account: "acme", Kind: store.KindLive}); len(jobs) != 1 || jobs[0].Status != store.StatusQueued {
		t.Errorf("unconnected session after the shutdown: %+v", jobs)
	}
}

// TestRecoverLive: at start, a session a restart interrupted while it ran
// is transcribed from its stored recording and ended done; one never
// connected whose token expired ends error; one never connected within
// its token's life waits for its client again.
func TestRecoverLive(t *testing.T) {
	s, db, _ := testService(t, func(c *Config) { c.TokenTTL = time.Hour })
	params := json.RawMessage(`{"encoding":"wav/pcm","sample_rate":16000,"bit_depth":16,"channels":1}`)
	mk := func(id string, st store.Status, created time.Time) {
		j := &store.Job{ID: id, Account: "acme", Kind: store.KindLive, Status: st, CreatedAt: created,
			Params: params, Blob: "live-" + id + ".wav", PostSessionMetadata: store.Metadata{}}
		if err := db.CreateJob(j); err != nil {
			t.Fatal(err)
		}
	}
	const (
		running = "00000000-0000-4000-8000-000000000001"
		expired = "00000000-0000-4000-8000-000000000002"
		waiting = "00000000-0000-4000-8000-000000000003"
	)
	now := time.Now()
	mk(running, store.StatusProcessing, now.Add(-time.Minute))
	mk(expired, store.StatusQueued, now.Add(-2*time.Hour))
	mk(waiting, store.StatusQueued, now.Add(-time.Minute))
	wav, err := os.ReadFile(speechFile)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.WriteBlob("live-"+running+".wav", strings.NewReader(string(wav)), 0); err != nil {
		t.Fatal(err)
	}
	rep, err := db.Recover(store.RecoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range rep.Live {
		s.Recover(t.Context(), id)
	}
	j, _ := db.Job(running)
	if j.Status != store.StatusDone || !strings.Contains(fullTranscript(t, j), "sense") {
		t.Errorf("recovered running session: %s %q", j.Status, j.ErrorMessage)
	}
	j, _ = db.Job(expired)
	if j.Status != store.StatusError || !strings.Contains(j.ErrorMessage, "expired") {
		t.Errorf("expired session: %s %q", j.Status, j.ErrorMessage)
	}
	j, _ = db.Job(waiting)
	if j.Status != store.StatusQueued || s.Sessions() != 1 {
		t.Errorf("waiting session: %s, %d sessions", j.Status, s.Sessions())
	}
	tok, err := s.token(waiting, now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	sess, err := s.AttachLive(t.Context(), tok, "127.0.0.1:1", &listener{})
	if err != nil {
		t.Fatalf("client of a recovered session: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	sess.Stop(ctx)
	waitDone(t, sess)
}

// TestNeverConnectedDropsRecording: a session no client connected to
// within live.connect_timeout ends 408 and leaves no local recording (on a
// sealed store, no spool and no spool key either: daemon
// TestDropRecording). Before, the local file stayed behind, one for every
// such session.
func TestNeverConnectedDropsRecording(t *testing.T) {
	s, db, _ := testService(t, func(c *Config) { c.ConnectTimeout = time.Second })
	created, err := s.CreateLive(t.Context(), "acme", "", "r", []byte(`{}`), "")
	if err != nil {
		t.Fatal(err)
	}
	j, err := db.Job(created.ID)
	if err != nil {
		t.Fatal(err)
	}
	path, err := s.deps.Recordings.RecordingPath(j.Blob)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no local recording while the session waits: %v", err)
	}
	for deadline := time.Now().Add(30 * time.Second); s.Sessions() > 0; {
		if time.Now().After(deadline) {
			t.Fatal("the session did not end within 30 s of its connect timeout")
		}
		time.Sleep(10 * time.Millisecond) // polling the service, not settling
	}
	if j, err = db.Job(created.ID); err != nil || j.Status != store.StatusError || j.ErrorCode != 408 {
		t.Fatalf("job %+v, %v; want error 408", j, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the local recording %s is still there (%v)", path, err)
	}
}
