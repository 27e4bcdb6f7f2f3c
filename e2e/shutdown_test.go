package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
)

// shutdownStages are the stages of a graceful stop, in order
// (daemon/shutdown.go, app/run.go).
var shutdownStages = []string{"doors", "live", "workers", "outbox", "store"}

// terminate sends SIGTERM to d and waits for it to exit, failing the test
// if it is still running past bound (the sum of its shutdown: stages) plus
// slack for the process's own start-up of the stop and exit. It returns
// how long the exit took.
func (d *daemonProc) terminate(bound time.Duration) time.Duration {
	d.t.Helper()
	start := time.Now()
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(bound + 30*time.Second):
		d.Kill()
		d.mu.Lock()
		for _, l := range d.lines {
			if !strings.Contains(l, `"level":"DEBUG"`) && !strings.Contains(l, `"msg":"request"`) {
				d.t.Logf("log: %.400s", l)
			}
		}
		d.mu.Unlock()
		d.t.Fatalf("earshotd still running %s after SIGTERM (stages' bound %s)", time.Since(start), bound)
	}
	took := time.Since(start)
	d.t.Logf("exited %s after SIGTERM (stages' bound %s)", took.Round(time.Millisecond), bound)
	if took > bound+5*time.Second {
		d.t.Errorf("exited %s after SIGTERM, past the stages' bound of %s", took, bound)
	}
	if st := d.cmd.ProcessState; st == nil || !st.Success() {
		d.t.Errorf("exit after SIGTERM: %v, want status 0", st)
	}
	return took
}

// checkStages checks that each shutdown stage was logged once, in order,
// and returns the stages cut short by their bound.
func (d *daemonProc) checkStages() (cut []string) {
	d.t.Helper()
	last := -1
	for _, stage := range shutdownStages {
		at := d.logIndex(`"shutdown stage done"`, `"stage":"`+stage+`"`)
		if at < 0 {
			d.t.Errorf("no log of shutdown stage %s", stage)
			continue
		}
		if n := d.logCount(`"shutdown stage done"`, `"stage":"`+stage+`"`); n != 1 {
			d.t.Errorf("shutdown stage %s logged %d times", stage, n)
		}
		if at < last {
			d.t.Errorf("shutdown stage %s logged before the stage before it", stage)
		}
		last = at
		if d.logCount(`"shutdown stage done"`, `"stage":"`+stage+`"`, `"cut_short":true`) > 0 {
			cut = append(cut, stage)
		}
	}
	return cut
}

// TestShutdownFinishesWork: SIGTERM while a WebSocket live session streams
// and a pre-recorded job with a callback runs, with bounds that let both
// finish. The live session is finished by the shutdown (its client gets
// post_final_transcript and end_session; after the restart it is done with
// its recording, not recovered from it), the job finishes during the
// workers stage (done after the restart at its first attempt, not run
// again), its callback is delivered in the outbox stage before the process
// exits, the stages run in order and the process exits cleanly within the
// sum of their bounds. On main (everything stopped at once) the job was
// put back in the queue at the signal and its callback only came after
// the restart.
func TestShutdownFinishesWork(t *testing.T) {
	const cfg = `shutdown:
  doors: 5s
  live: 40s
  workers: 60s
  outbox: 10s
`
	const bound = 115 * time.Second
	d := startDaemon(t, "", cfg)
	key := createKey(t, d.DataDir, "acme")

	recv := &callbackReceiver{hit: make(chan struct{}, 1)}
	hookLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hooks := &http.Server{Handler: recv}
	go hooks.Serve(hookLn)
	defer hooks.Close()

	path, _ := clip(t, "ls-test-clean-1089-134686-0000.wav")
	audio := pcmOf(t, path)
	s := d.createLive(key, map[string]any{"messages_config": map[string]any{"receive_lifecycle_events": true}})
	conn, err := dial(t, s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	type read struct {
		msgs []liveMsg
		code int
	}
	acked := make(chan int, 1024)
	got := make(chan read, 1)
	go func() {
		var r read
		defer func() { close(acked); got <- r }()
		conn.SetReadDeadline(time.Now().Add(3 * time.Minute))
		for {
			_, b, err := conn.ReadMessage()
			if err != nil {
				var ce *websocket.CloseError
				if errors.As(err, &ce) {
					r.code = ce.Code
				}
				return
			}
			var m liveMsg
			if json.Unmarshal(b, &m) != nil {
				continue
			}
			r.msgs = append(r.msgs, m)
			var ack struct {
				ByteRange []int `json:"byte_range"`
			}
			if m.Type == "audio_chunk" && json.Unmarshal(m.Data, &ack) == nil && len(ack.ByteRange) == 2 {
				acked <- ack.ByteRange[1]
			}
		}
	}()
	// 6 s of speech, acknowledged up to 5 s: the session is mid-stream.
	sent := min(6*32000, len(audio))
	for i := 0; i < sent; i += 3200 {
		if err := conn.WriteMessage(websocket.BinaryMessage, audio[i:min(i+3200, sent)]); err != nil {
			t.Fatal(err)
		}
	}
	lastAck := 0
	deadline := time.After(time.Minute)
	for lastAck < 5*32000 {
		select {
		case n := <-acked:
			lastAck = max(lastAck, n)
		case <-deadline:
			t.Fatalf("acked %d bytes within a minute", lastAck)
		}
	}

	status, up, body := d.upload(key, path)
	if status != 200 {
		t.Fatalf("upload: %d %s", status, body)
	}
	var job struct{ ID string }
	if status, body := d.postJSON("/v2/pre-recorded", key, map[string]any{
		"audio_url": up.AudioURL, "callback_url": "http://" + hookLn.Addr().String() + "/hook",
	}, &job); status != 201 {
		t.Fatalf("create job: %d %s", status, body)
	}
	d.WaitLog(time.Minute, `"job processing"`, job.ID)

	d.terminate(bound)
	recv.mu.Lock()
	hits := append([]callbackHit(nil), recv.got...)
	recv.mu.Unlock()
	if len(hits) != 1 || !bytes.Contains(hits[0].body, []byte(job.ID)) || !bytes.Contains(hits[0].body, []byte(`"transcription.success"`)) {
		t.Errorf("callbacks received before the exit: %d, want the job's transcription.success", len(hits))
	}
	r := <-got
	var types []string
	for _, m := range r.msgs {
		if m.Type != "audio_chunk" {
			types = append(types, m.Type)
		}
	}
	if n := len(types); n < 2 || types[n-2] != "post_final_transcript" || types[n-1] != "end_session" || r.code != 1000 {
		t.Errorf("live client got %v, close %d; want the session finished: ... post_final_transcript, end_session, close 1000", types, r.code)
	}
	if cut := d.checkStages(); len(cut) > 0 {
		t.Errorf("stages cut short by their bound: %v", cut)
	}
	if d.logCount(`"job requeued at shutdown"`) != 0 {
		t.Errorf("a job was put back in the queue although it could finish within shutdown.workers")
	}

	d2 := startDaemon(t, d.DataDir, cfg)
	live := d2.waitLive(key, s.ID, time.Minute)
	if live["status"] != "done" {
		t.Fatalf("live session after the restart: %v %v", live["status"], live["error_code"])
	}
	psm, _ := live["post_session_metadata"].(map[string]any)
	if _, ok := psm["recovered"]; ok {
		t.Errorf("live session was left to recovery at the restart, not finished by the shutdown: %v", psm)
	}
	status, wav := d2.do("GET", "/v2/live/"+s.ID+"/file", key, nil, "", nil)
	if rec := wav[min(44, len(wav)):]; status != 200 || len(rec) < lastAck || len(rec) > sent || !bytes.Equal(rec, audio[:len(rec)]) {
		t.Errorf("recording after the shutdown: %d, %d bytes; want the sent prefix with the %d acknowledged", status, len(rec), lastAck)
	}
	var rec map[string]any
	if status, body := d2.do("GET", "/v2/pre-recorded/"+job.ID, key, nil, "", &rec); status != 200 {
		t.Fatalf("job after the restart: %d %s", status, body)
	}
	if rec["status"] != "done" {
		t.Fatalf("job after the restart: %v, want done: it could finish during the shutdown", rec["status"])
	}
	checkRecord(t, rec, job.ID, "done")
	if psm, _ := rec["post_session_metadata"].(map[string]any); psm["attempts"] != 1.0 {
		t.Errorf("job after the restart: attempts %v, want 1 (finished during the shutdown)", psm["attempts"])
	}
}

// TestShutdownRequeuesJob: SIGTERM while a long pre-recorded job runs,
// with a workers bound far shorter than the job: the job is put back in
// the queue at the bound (logged), the process exits within the stages'
// bound, and after the restart the job runs again and completes.
func TestShutdownRequeuesJob(t *testing.T) {
	t.Parallel() // waits more than it computes: see doc.go
	const cfg = `shutdown:
  doors: 2s
  live: 2s
  workers: 1s
  outbox: 2s
`
	const bound = 7 * time.Second
	d := startDaemon(t, "", cfg)
	key := createKey(t, d.DataDir, "acme")
	ids := queueJobs(t, d, key, longJobClip)
	d.WaitLog(time.Minute, `"job processing"`, ids[0])

	d.terminate(bound)
	cut := d.checkStages()
	if strings.Join(cut, ",") != "workers" {
		t.Errorf("stages cut short: %v, want only workers (the long job)", cut)
	}
	if d.logCount(`"job requeued at shutdown"`, ids[0]) != 1 {
		t.Errorf("the running job was not logged as put back in the queue")
	}

	d2 := startDaemon(t, d.DataDir, cfg)
	rec := d2.waitJob(key, ids[0], 5*time.Minute)
	checkRecord(t, rec, ids[0], "done")
	if tr := rec["result"].(map[string]any)["transcription"].(map[string]any); tr["full_transcript"] == "" {
		t.Errorf("job %s: empty transcript after the restart", ids[0])
	}
}

// logIndex is the index of the first daemon log line containing every one
// of parts, -1 when there is none.
func (d *daemonProc) logIndex(parts ...string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, l := range d.lines {
		if containsAll(l, parts) {
			return i
		}
	}
	return -1
}
