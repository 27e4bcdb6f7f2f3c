package e2e

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fasthttp/websocket"

	"github.com/earshot-dev/earshot/store/postgres/pgtest"
)

// clusterConfig is a node's config: the shared store at dsn, as node id.
func clusterConfig(dsn, id string) string {
	return fmt.Sprintf("store:\n  backend: postgres\n  dsn: %q\ncluster:\n  node_id: %s\n", dsn, id)
}

// clusterKeys makes an admin key with the CLI through a's config (the
// shared store), then with it an API key of account acme over HTTP on a,
// and checks that this key works on other at once.
func clusterKeys(t *testing.T, a, other *daemonProc) (admin string, key adminKey) {
	t.Helper()
	admin = createClusterKey(t, a, "admin")
	if status, body := a.postJSON("/admin/keys", admin, map[string]any{"account": "acme"}, &key); status != 201 {
		t.Fatalf("POST /admin/keys on %s: %d %s", a.Base, status, body)
	}
	if status, body := other.do("GET", "/v2/pre-recorded", key.Key, nil, "", nil); status != 200 {
		t.Fatalf("the new key of %s on %s: %d %s", a.Base, other.Base, status, body)
	}
	return admin, key
}

// liveOnA is a live session of account acme on node a of a two-node
// cluster (recording_sync 250ms) whose client sent the first 3 s of its
// audio and reads every message; at least 2 s of it reached the shared
// store.
type liveOnA struct {
	dsn    string
	conf   func(id string) string // a node's config
	a, b   *daemonProc
	key    string
	audio  []byte // the clip's PCM; its first 3 s were sent
	s      liveSession
	conn   *websocket.Conn
	closed chan struct{} // closed when the client's reads end: the server closed the socket
	stored int64         // bytes of the recording seen in the shared store
}

// startLiveOnA starts a two-node cluster on a throwaway PostgreSQL and
// runs a live session on its node a, as liveOnA says.
func startLiveOnA(t *testing.T) *liveOnA {
	t.Helper()
	l := &liveOnA{dsn: pgtest.StartDatabase(t), closed: make(chan struct{})}
	l.conf = func(id string) string { return clusterConfig(l.dsn, id) + "  recording_sync: 250ms\n" }
	l.a = startDaemon(t, "", l.conf("node-a"))
	l.b = startDaemon(t, "", l.conf("node-b"))
	l.key = createClusterKey(t, l.a, "acme")
	path, _ := clip(t, "ls-test-clean-1089-134686-0000.wav")
	l.audio = pcmOf(t, path)
	l.s = l.a.createLive(l.key, map[string]any{})
	conn, err := dial(t, l.s.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	l.conn = conn
	go func() { // drain the server's messages until it closes
		defer close(l.closed)
		for {
			if _, _, err := conn.ReadMessage(); err != nil {
				return
			}
		}
	}()
	for i := 0; i < 3*32000; i += 3200 {
		if err := conn.WriteMessage(websocket.BinaryMessage, l.audio[i:i+3200]); err != nil {
			t.Fatal(err)
		}
	}
	l.stored = waitStored(t, l.dsn, "live-"+l.s.ID+".wav", 44+2*32000)
	return l
}

// TestClusterTwoNodes: two real earshotd nodes on one PostgreSQL act as
// one service. A key made over HTTP on node A works on node B at once; a
// file uploaded and a job created on A are read, listed, downloaded and
// deleted on B; a live session run on A is read and downloaded on B; a key
// revoked on B is refused on A at once.
func TestClusterTwoNodes(t *testing.T) {
	t.Parallel() // waits more than it computes: see doc.go
	dsn := pgtest.StartDatabase(t)
	a := startDaemon(t, "", clusterConfig(dsn, "node-a"))
	b := startDaemon(t, "", clusterConfig(dsn, "node-b"))
	for _, d := range []*daemonProc{a, b} {
		if _, err := os.Stat(d.DataDir + "/earshot.db"); !os.IsNotExist(err) {
			t.Errorf("a postgres node made an embedded store in %s: %v", d.DataDir, err)
		}
	}
	// The CLI reaches the shared store through the same config; a key
	// made over HTTP on A works on B at once.
	admin, key := clusterKeys(t, a, b)

	// Upload and create on A; read, list and download on B.
	path, _ := clip(t, "ls-test-clean-1089-134686-0000.wav")
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	status, up, body := a.upload(key.Key, path)
	if status != 200 {
		t.Fatalf("upload on A: %d %s", status, body)
	}
	if status, got := b.do("GET", "/v2/files/"+up.AudioMetadata.ID, key.Key, nil, "", nil); status != 200 || !bytes.Equal(got, want) {
		t.Fatalf("A's upload downloaded from B: %d, %d bytes, want %d", status, len(got), len(want))
	}
	var created struct {
		ID string `json:"id"`
	}
	if status, body := a.postJSON("/v2/pre-recorded", key.Key, map[string]any{
		"audio_url": up.AudioURL, "custom_metadata": map[string]any{"ticket": "T-9"},
	}, &created); status != 201 {
		t.Fatalf("create on A: %d %s", status, body)
	}
	rec := b.waitJob(key.Key, created.ID, 2*time.Minute)
	checkRecord(t, rec, created.ID, "done")
	tr := rec["result"].(map[string]any)["transcription"].(map[string]any)
	if txt, _ := tr["full_transcript"].(string); len(strings.Fields(txt)) < 5 {
		t.Errorf("transcript read on B: %q", txt)
	}
	var page struct{ Items []map[string]any }
	if status, body := b.do("GET", "/v2/pre-recorded?custom_metadata[ticket]=T-9", key.Key, nil, "", &page); status != 200 ||
		len(page.Items) != 1 || page.Items[0]["id"] != created.ID {
		t.Fatalf("list on B: %d %s", status, body)
	}
	if status, got := b.do("GET", "/v2/pre-recorded/"+created.ID+"/file", key.Key, nil, "", nil); status != 200 || !bytes.Equal(got, want) {
		t.Errorf("job audio from B: %d, %d bytes, want %d", status, len(got), len(want))
	}
	if status, body := b.do("DELETE", "/v2/pre-recorded/"+created.ID, key.Key, nil, "", nil); status != 202 {
		t.Fatalf("delete on B: %d %s", status, body)
	}
	for _, p := range []string{"/v2/pre-recorded/" + created.ID, "/v2/pre-recorded/" + created.ID + "/file"} {
		var eb errBody
		status, _ := a.do("GET", p, key.Key, nil, "", &eb)
		checkError(t, status, eb, 404, p+" on A after delete on B")
	}
	if status, body := b.do("DELETE", "/v2/files/"+up.AudioMetadata.ID, key.Key, nil, "", nil); status != 202 {
		t.Fatalf("delete upload on B: %d %s", status, body)
	}
	var eb errBody
	status, _ = a.do("GET", "/v2/files/"+up.AudioMetadata.ID, key.Key, nil, "", &eb)
	checkError(t, status, eb, 404, "A's upload on A after delete on B")

	// A live session run on A is read and its recording downloaded on B:
	// the recording reached the shared store as the session ended.
	pcm := pcmOf(t, path)
	s := a.createLive(key.Key, map[string]any{})
	if _, code := runSession(t, s.URL, pcm, 32, 0); code != 1000 {
		t.Fatalf("live session on A closed with %d", code)
	}
	var live map[string]any
	if status, body := b.do("GET", "/v2/live/"+s.ID, key.Key, nil, "", &live); status != 200 || live["status"] != "done" {
		t.Fatalf("live session of A on B: %d %s", status, body)
	}
	if status, wav := b.do("GET", "/v2/live/"+s.ID+"/file", key.Key, nil, "", nil); status != 200 ||
		len(wav) != 44+len(pcm) || !bytes.Equal(wav[44:], pcm) || string(wav[:4]) != "RIFF" {
		t.Errorf("live recording from B: %d, %d bytes, want 44+%d identical", status, len(wav), len(pcm))
	}
	if entries, _ := os.ReadDir(a.DataDir + "/recordings"); len(entries) != 0 {
		t.Errorf("A kept %d local recordings after the session ended", len(entries))
	}

	// A key revoked on B is refused on A at once.
	if status, body := b.do("DELETE", "/admin/keys/"+key.ID, admin, nil, "", nil); status != 202 {
		t.Fatalf("revoke on B: %d %s", status, body)
	}
	status, _ = a.do("GET", "/v2/pre-recorded", key.Key, nil, "", &eb)
	checkError(t, status, eb, 401, "the key revoked on B, on A")
}

// TestClusterNodeDies: node A is SIGKILLed while processing a job; its
// lease runs out and node B requeues and finishes that job and every other
// one, each exactly once.
func TestClusterNodeDies(t *testing.T) {
	t.Parallel() // waits more than it computes: see doc.go
	dsn := pgtest.StartDatabase(t)
	a := startDaemon(t, "", clusterConfig(dsn, "node-a"))
	b := startDaemon(t, "", clusterConfig(dsn, "node-b"))
	key := createClusterKey(t, a, "acme")
	path, _ := clip(t, "ls-test-clean-1089-134686-0000.wav")
	status, up, body := a.upload(key, path)
	if status != 200 {
		t.Fatalf("upload on A: %d %s", status, body)
	}
	var ids []string
	for range 4 {
		var created struct {
			ID string `json:"id"`
		}
		if status, body := a.postJSON("/v2/pre-recorded", key, map[string]any{"audio_url": up.AudioURL}, &created); status != 201 {
			t.Fatalf("create on A: %d %s", status, body)
		}
		ids = append(ids, created.ID)
	}
	line := a.WaitLog(time.Minute, `"job processing"`, `"job_id"`)
	var rec struct {
		JobID string `json:"job_id"`
	}
	if err := json.Unmarshal([]byte(line), &rec); err != nil || rec.JobID == "" {
		t.Fatalf("job processing line %q: %v", line, err)
	}
	a.Kill()
	b.WaitLog(2*time.Minute, "requeued jobs of a node whose lease ended", rec.JobID)
	for _, id := range ids {
		job := b.waitJob(key, id, 3*time.Minute)
		checkRecord(t, job, id, "done")
	}
	// The record is done before B logs it: wait for the line.
	b.WaitLog(time.Minute, `"job done"`, rec.JobID)
	if n := b.logCount(`"job done"`, rec.JobID); n != 1 {
		t.Errorf("B finished A's job %s %d times, want once; its lines on A and B:\n%s\n%s", rec.JobID, n,
			strings.Join(a.linesWith(rec.JobID), "\n"), strings.Join(b.linesWith(rec.JobID), "\n"))
	}
}

// TestClusterKillDuringLive: the node running a live session is
// SIGKILLed; a survivor ends the session as error 503 (never left
// processing) and keeps its recording as far as it had reached the shared
// store: at least what the test saw there before the kill, a prefix of
// what was sent, its WAV header giving that length. The killed node,
// started again on its data dir, drops its stale local copy and leaves the
// survivor's ending as it is. (Before the survivor, the session stayed
// processing until its own node came back.)
func TestClusterKillDuringLive(t *testing.T) {
	t.Parallel() // waits more than it computes: see doc.go
	l := startLiveOnA(t)
	a, b, key, s, audio, stored := l.a, l.b, l.key, l.s, l.audio, l.stored
	a.Kill()
	rec := b.waitLive(key, s.ID, time.Minute)
	msg, _ := rec["error_message"].(string)
	if rec["status"] != "error" || rec["error_code"] != float64(503) {
		t.Fatalf("session of the killed node: %v, error_code %v (%s); want error 503", rec["status"], rec["error_code"], msg)
	}
	b.WaitLog(time.Minute, "ended the live session of a stopped node", s.ID, "node-a")
	status, wav := b.do("GET", "/v2/live/"+s.ID+"/file", key, nil, "", nil)
	if status != 200 || len(wav) < 44 {
		t.Fatalf("recording from B after A's kill: %d %.200s", status, wav)
	}
	got := wav[44:]
	if int64(len(wav)) < stored || len(got) > 3*32000 || !bytes.Equal(got, audio[:len(got)]) ||
		string(wav[:4]) != "RIFF" || int(binary.LittleEndian.Uint32(wav[40:44])) != len(got) {
		t.Errorf("recording holds %d bytes (header says %d), want at least the %d stored before the kill, a prefix of what was sent",
			len(wav), binary.LittleEndian.Uint32(wav[40:44]), stored)
	}
	a2 := startDaemon(t, a.DataDir, l.conf("node-a"))
	a2.WaitLog(time.Minute, "removed the local recording of a session another node ended", s.ID)
	if rec := a2.waitLive(key, s.ID, time.Minute); rec["status"] != "error" || rec["error_code"] != float64(503) {
		t.Errorf("after A came back: %v %v", rec["status"], rec["error_code"])
	}
	if status, again := a2.do("GET", "/v2/live/"+s.ID+"/file", key, nil, "", nil); status != 200 || !bytes.Equal(again, wav) {
		t.Errorf("recording after A came back: %d, %d bytes, want the %d B kept", status, len(again), len(wav))
	}
}

// TestClusterPostgresDown: while PostgreSQL is stopped, API calls that need
// it answer 503 with the contract's error body (they answered 500 before
// store.ErrUnavailable was mapped), each within the store's statement
// timeout; when it is back the same node serves again without a restart,
// and a job created then is transcribed. A job whose result came while it
// was down is stored when it is back (before, the worker gave it up and
// the job stayed processing, its lease renewed for ever). That job is held
// processing by its LLM add-on (heldLLM), its audio decoded, until the
// requests below have had their 503s (before, it was the 66 s clip, which
// had to be still decoding when they were done).
func TestClusterPostgresDown(t *testing.T) {
	t.Parallel() // waits more than it computes: see doc.go
	srv := pgtest.StartTest(t)
	llm := newHeldLLM(t)
	a := startDaemon(t, "", clusterConfig(srv.NewDatabase(t), "node-a")+llm.config())
	key := createClusterKey(t, a, "acme")
	path, _ := clip(t, "ls-test-clean-1089-134686-0000.wav")
	status, up, body := a.upload(key, path)
	if status != 200 {
		t.Fatalf("upload: %d %s", status, body)
	}
	// A job whose result comes while PostgreSQL is down: processing when
	// it stops, stored when it is back.
	running := queueHeldJob(t, a, key)
	llm.waitRequest(t, time.Minute)
	if err := srv.Halt(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/v2/pre-recorded", ""},
		{"GET", "/v2/files/" + up.AudioMetadata.ID, ""},
		{"POST", "/v2/pre-recorded", `{"audio_url":"` + up.AudioURL + `"}`},
	} {
		var eb errBody
		status, b := a.do(c.method, c.path, key, strings.NewReader(c.body), "application/json", &eb)
		checkError(t, status, eb, 503, c.method+" "+c.path+" with PostgreSQL down")
		if eb.Path != c.path {
			t.Errorf("%s %s: error body path %q (%s)", c.method, c.path, eb.Path, b)
		}
	}
	llm.Release()
	a.WaitLog(5*time.Minute, "the job's result is stored when it is back", running)
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, b := a.do("GET", "/v2/pre-recorded", key, nil, "", nil)
		if status == 200 {
			break
		}
		if status != 503 || time.Now().After(deadline) {
			t.Fatalf("GET /v2/pre-recorded after PostgreSQL came back: %d %s", status, b)
		}
		time.Sleep(100 * time.Millisecond) // polling interval against a real process, not settling
	}
	var created struct {
		ID string `json:"id"`
	}
	if status, body := a.postJSON("/v2/pre-recorded", key, map[string]any{"audio_url": up.AudioURL}, &created); status != 201 {
		t.Fatalf("create after PostgreSQL came back: %d %s", status, body)
	}
	checkRecord(t, a.waitJob(key, created.ID, 2*time.Minute), created.ID, "done")
	checkRecord(t, a.waitJob(key, running, 2*time.Minute), running, "done")
}

// TestClusterNodes: GET /admin/nodes on any node lists every node sharing
// the store with its advertise_url, liveness and load from its heartbeats;
// a node SIGKILLed is shown as not alive once its heartbeats stop.
func TestClusterNodes(t *testing.T) {
	t.Parallel() // waits more than it computes: see doc.go
	dsn := pgtest.StartDatabase(t)
	conf := func(id string) string {
		return clusterConfig(dsn, id) + "  advertise_url: http://" + id + ".example:8080\n"
	}
	a := startDaemon(t, "", conf("node-a"))
	b := startDaemon(t, "", conf("node-b"))
	admin := createClusterKey(t, a, "admin")
	var eb errBody
	status, _ := b.do("GET", "/admin/nodes", createClusterKey(t, a, "acme"), nil, "", &eb)
	checkError(t, status, eb, 403, "GET /admin/nodes with a key that is not admin")

	type node struct {
		NodeID       string `json:"node_id"`
		AdvertiseURL string `json:"advertise_url"`
		LastSeen     string `json:"last_seen"`
		Alive        bool   `json:"alive"`
		LiveCapacity int    `json:"live_capacity"`
		LiveFree     int    `json:"live_free"`
		RunningJobs  int    `json:"running_jobs"`
	}
	// waitNodes polls GET /admin/nodes on d until ok holds for the list.
	waitNodes := func(d *daemonProc, what string, ok func(map[string]node) bool) map[string]node {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			var page struct{ Nodes []node }
			if status, body := d.do("GET", "/admin/nodes", admin, nil, "", &page); status != 200 {
				t.Fatalf("GET /admin/nodes: %d %s", status, body)
			}
			byID := map[string]node{}
			for _, n := range page.Nodes {
				byID[n.NodeID] = n
			}
			if ok(byID) {
				return byID
			}
			if time.Now().After(deadline) {
				t.Fatalf("GET /admin/nodes: %+v; want %s", page.Nodes, what)
			}
			time.Sleep(100 * time.Millisecond) // polling interval against a real process, not settling
		}
	}
	nodes := waitNodes(a, "both nodes alive", func(m map[string]node) bool {
		return len(m) == 2 && m["node-a"].Alive && m["node-b"].Alive
	})
	for _, id := range []string{"node-a", "node-b"} {
		n := nodes[id]
		if _, err := time.Parse(time.RFC3339, n.LastSeen); err != nil {
			t.Errorf("%s: last_seen %q: %v", id, n.LastSeen, err)
		}
		if n.AdvertiseURL != "http://"+id+".example:8080" || n.LiveCapacity < 1 || n.LiveFree != n.LiveCapacity || n.RunningJobs != 0 {
			t.Errorf("%s: %+v; want its advertise_url, all live capacity free, no job running", id, n)
		}
	}
	b.Kill()
	waitNodes(a, "node-b not alive after its SIGKILL, node-a alive", func(m map[string]node) bool {
		return len(m) == 2 && m["node-a"].Alive && !m["node-b"].Alive
	})
}

// TestClusterNodeStalls: node A stalls (SIGSTOP) past cluster.job_lease
// while it processes a job that has a callback; B requeues the job and
// finishes it. When A runs again and finishes its own run, the job is not
// ended twice: A drops its result, and the receiver gets one
// transcription.success. (Before the claim check A stored its late result
// over B's and queued a second callback: A logged "job done" too.)
func TestClusterNodeStalls(t *testing.T) {
	t.Parallel() // waits more than it computes: see doc.go
	dsn := pgtest.StartDatabase(t)
	hook, hookURL := startHookReceiver(t)
	conf := func(id string) string { return clusterConfig(dsn, id) + "  job_lease: 1s\n" }
	a := startDaemon(t, "", conf("node-a"))
	key := createClusterKey(t, a, "acme")
	path, _ := clip(t, "ls-test-clean-1089-134686-0000.wav")
	status, up, body := a.upload(key, path)
	if status != 200 {
		t.Fatalf("upload on A: %d %s", status, body)
	}
	var created struct{ ID string }
	if status, body := a.postJSON("/v2/pre-recorded", key, map[string]any{"audio_url": up.AudioURL, "callback": true,
		"callback_config": map[string]any{"url": hookURL}}, &created); status != 201 {
		t.Fatalf("create on A: %d %s", status, body)
	}
	id := created.ID
	a.WaitLog(time.Minute, `"job processing"`, id)
	resume := a.stall()
	b := startDaemon(t, "", conf("node-b"))
	b.WaitLog(time.Minute, "requeued jobs of a node whose lease ended", id)
	b.WaitLog(2*time.Minute, `"job done"`, id)
	resume()
	// A's run ends one way or the other: it finished the job, or it saw
	// its claim was lost.
	if which := waitLineOf(t, a, id, []string{`"job done"`, "job claim lost"}); which != "job claim lost" || a.logCount(`"job done"`, id) > 0 {
		t.Errorf("A finished the job B had taken over and finished:\n%s", strings.Join(a.linesWith(id), "\n"))
	}
	rec := b.waitJob(key, id, time.Minute)
	checkRecord(t, rec, id, "done")
	hits := hook.wait(t, 1, time.Minute)
	n := 0
	for _, h := range hits {
		if bytes.Contains(h.body, []byte(id)) {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d callbacks for the job, want 1", n)
	}
}

// TestClusterLiveNodeStalls: the node running a live session stalls
// (SIGSTOP) until a survivor has ended the session as error 503; when it
// runs again and its client stops the recording, the survivor's ending
// stands. (Before, the stalled node's late end turned the job done.)
func TestClusterLiveNodeStalls(t *testing.T) {
	t.Parallel() // waits more than it computes: see doc.go
	l := startLiveOnA(t)
	a, b, key, s, conn := l.a, l.b, l.key, l.s, l.conn
	resume := a.stall()
	if rec := b.waitLive(key, s.ID, time.Minute); rec["status"] != "error" || rec["error_code"] != float64(503) {
		t.Fatalf("session of the stalled node: %v %v; want error 503", rec["status"], rec["error_code"])
	}
	resume()
	if err := conn.WriteJSON(map[string]any{"type": "stop_recording"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.closed:
	case <-time.After(time.Minute):
		t.Fatal("the stalled node did not end the session within a minute of running again")
	}
	// The socket closes after the session's end was stored (or dropped).
	var rec map[string]any
	if status, _ := b.do("GET", "/v2/live/"+s.ID, key, nil, "", &rec); status != 200 || rec["status"] != "error" || rec["error_code"] != float64(503) {
		t.Errorf("after the stalled node ran again: %d %v %v; want the survivor's error 503:\n%s", status, rec["status"], rec["error_code"],
			strings.Join(a.linesWith(s.ID), "\n"))
	}
}
