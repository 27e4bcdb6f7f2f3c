package e2e

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// blobFiles lists the audio files in a data dir (partial writes aside).
func blobFiles(t *testing.T, dataDir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dataDir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".tmp-") {
			names = append(names, e.Name())
		}
	}
	return names
}

// waitBlobs waits until the data dir's audio files are exactly want: a job
// or session is recorded as ended before its file goes.
func waitBlobs(t *testing.T, dataDir string, want []string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		got := blobFiles(t, dataDir)
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("blobs %v after %s, want %v", got, timeout, want)
			return
		}
		time.Sleep(50 * time.Millisecond) // polling interval against a real process, not settling
	}
}

// gzipBomb is 64 MiB of zeros gzipped (about 64 KB).
func gzipBomb(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zero := make([]byte, 1<<20)
	for range 64 {
		zw.Write(zero)
	}
	zw.Close()
	return buf.Bytes()
}

// TestFailedJobFiles: a fetched body that is not audio (a gzip bomb sent
// with Content-Encoding: gzip) is stored as sent, never expanded, and is
// gone once its job ends in error (as is any other non-audio body, and the
// empty recording of a live session never connected); a blob no record names is removed at
// start, while the files of live records stay.
func TestFailedJobFiles(t *testing.T) {
	bomb := gzipBomb(t)
	var mu sync.Mutex
	var acceptEncoding []string // guarded by mu
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		acceptEncoding = append(acceptEncoding, r.Header.Get("Accept-Encoding"))
		mu.Unlock()
		w.Header().Set("Content-Type", "audio/wav")
		if r.URL.Path == "/text.wav" {
			w.Write(bytes.Repeat([]byte("not audio\n"), 1000))
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(bomb)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	const cfg = `
limits:
  max_upload_bytes: 33554432
live:
  token_ttl: 1s
`
	d := startDaemon(t, "", cfg)
	key := createKey(t, d.DataDir, "acme")
	path, _ := clip(t, "pocketsphinx-goforward.wav")
	status, up, body := d.upload(key, path)
	if status != 200 {
		t.Fatalf("upload: %d %s", status, body)
	}
	var done struct{ ID string }
	d.postJSON("/v2/pre-recorded", key, map[string]any{"audio_url": up.AudioURL}, &done)
	if rec := d.waitJob(key, done.ID, 2*time.Minute); rec["status"] != "done" {
		t.Fatalf("job from upload ended %v", rec["status"])
	}

	var failed struct{ ID string }
	d.postJSON("/v2/pre-recorded", key, map[string]any{"audio_url": "http://" + ln.Addr().String() + "/call.wav"}, &failed)
	rec := d.waitJob(key, failed.ID, time.Minute)
	msg, _ := rec["post_session_metadata"].(map[string]any)["error"].(string)
	if rec["status"] != "error" || !strings.Contains(msg, "not a readable audio file") {
		t.Errorf("gzip bomb job: %v %q, want error: not audio (stored as sent, not expanded past the limit)", rec["status"], msg)
	}
	var text struct{ ID string }
	d.postJSON("/v2/pre-recorded", key, map[string]any{"audio_url": "http://" + ln.Addr().String() + "/text.wav"}, &text)
	if rec := d.waitJob(key, text.ID, time.Minute); rec["status"] != "error" {
		t.Errorf("text job ended %v, want error", rec["status"])
	}
	mu.Lock()
	if len(acceptEncoding) != 2 || acceptEncoding[0] != "" {
		t.Errorf("fetch sent Accept-Encoding %q, want none", acceptEncoding)
	}
	mu.Unlock()
	// A live session never connected ends as error 408 and keeps no
	// (header-only) recording.
	live := d.createLive(key, map[string]any{})
	if rec := d.waitLive(key, live.ID, time.Minute); rec["error_code"] != 408.0 {
		t.Errorf("never-connected session ended %v %v, want error 408", rec["status"], rec["error_code"])
	}
	want := []string{"job-" + done.ID, "upload-" + up.AudioMetadata.ID}
	waitBlobs(t, d.DataDir, want, 10*time.Second)

	// An orphan (as an older version left for every failed download) goes
	// at start; the done job's and the upload's files stay. A session that
	// never connected, cut by a crash, ends 408 after it without a file.
	cut := d.createLive(key, map[string]any{})
	d.Kill()
	orphan := filepath.Join(d.DataDir, "blobs", "job-0b1c5f0e-8d7e-4a53-9f4e-2f1a0c9e7d11")
	if err := os.WriteFile(orphan, bomb, 0o600); err != nil {
		t.Fatal(err)
	}
	d2 := startDaemon(t, d.DataDir, cfg)
	if rec := d2.waitLive(key, cut.ID, time.Minute); rec["error_code"] != 408.0 {
		t.Errorf("session cut before connecting ended %v %v, want error 408", rec["status"], rec["error_code"])
	}
	waitBlobs(t, d2.DataDir, want, 10*time.Second)
	d2.WaitLog(10*time.Second, "removed unreferenced audio files", `"count":1`)
	if status, _ := d2.do("GET", "/v2/pre-recorded/"+done.ID+"/file", key, nil, "", nil); status != 200 {
		t.Errorf("done job's audio after restart: %d", status)
	}
}

// TestDeleteUpload: DELETE /v2/files/{id} removes an upload and its bytes
// for its owner only (202, as every DELETE); jobs already made from it keep
// their audio; afterwards the file is the same 404 as an unknown id.
func TestDeleteUpload(t *testing.T) {
	d := startDaemon(t, "", "")
	key := createKey(t, d.DataDir, "acme")
	other := createKey(t, d.DataDir, "globex")
	path, _ := clip(t, "pocketsphinx-goforward.wav")
	_, up, _ := d.upload(key, path)
	file := "/v2/files/" + up.AudioMetadata.ID
	var j struct{ ID string }
	if status, body := d.postJSON("/v2/pre-recorded", key, map[string]any{"audio_url": up.AudioURL}, &j); status != 201 {
		t.Fatalf("job from upload: %d %s", status, body)
	}

	for _, k := range []string{other, "", "es_garbage"} {
		var eb errBody
		status, _ := d.do("DELETE", file, k, nil, "", &eb)
		checkError(t, status, eb, 401, file)
	}
	if status, _ := d.do("GET", file, key, nil, "", nil); status != 200 {
		t.Fatalf("file after refused deletes: %d", status)
	}
	status, body := d.do("DELETE", file, key, nil, "", nil)
	if status != 202 || len(body) != 0 {
		t.Fatalf("owner's DELETE: %d %q, want 202 and no body", status, body)
	}
	for _, m := range []string{"GET", "DELETE"} {
		var eb errBody
		status, _ := d.do(m, file, key, nil, "", &eb)
		checkError(t, status, eb, 404, file)
	}
	var eb errBody
	status, _ = d.do("DELETE", "/v2/files/not-an-id", key, nil, "", &eb)
	checkError(t, status, eb, 404, "/v2/files/not-an-id")
	if slices.Contains(blobFiles(t, d.DataDir), "upload-"+up.AudioMetadata.ID) {
		t.Error("the upload's bytes are still on disk")
	}
	if rec := d.waitJob(key, j.ID, 2*time.Minute); rec["status"] != "done" {
		t.Errorf("job made before the delete ended %v", rec["status"])
	}
	if status, _ := d.do("GET", "/v2/pre-recorded/"+j.ID+"/file", key, nil, "", nil); status != 200 {
		t.Errorf("job's audio after its upload was deleted: %d", status)
	}
	if status, body := d.postJSON("/v2/pre-recorded", key, map[string]any{"audio_url": up.AudioURL}, nil); status != 422 {
		t.Errorf("job naming a deleted upload: %d %s, want 422", status, body)
	}
}

// TestAccountStorageQuota: limits.max_account_bytes bounds what one account
// keeps on disk: an upload past it answers 507 with SPEC's error body and
// leaves nothing behind, a new live session is refused with 507, a fetched
// audio_url past it ends its job as error 507, another account is
// unaffected, and deleting a file frees its room.
func TestAccountStorageQuota(t *testing.T) {
	path, _ := clip(t, "pocketsphinx-goforward.wav") // 89204 bytes
	wav, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "audio/wav")
		w.Write(wav)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	d := startDaemon(t, "", `
limits:
  max_account_bytes: 178408 # two uploads of the clip, exactly
`)
	key := createKey(t, d.DataDir, "acme")
	other := createKey(t, d.DataDir, "globex")
	var ups []uploadResponse
	for range 2 {
		status, up, body := d.upload(key, path)
		if status != 200 {
			t.Fatalf("upload within the quota: %d %s", status, body)
		}
		ups = append(ups, up)
	}
	// A job made from an upload links its bytes: it costs nothing more.
	var j struct{ ID string }
	if status, body := d.postJSON("/v2/pre-recorded", key, map[string]any{"audio_url": ups[0].AudioURL}, &j); status != 201 {
		t.Fatalf("job from upload: %d %s", status, body)
	}
	if rec := d.waitJob(key, j.ID, 2*time.Minute); rec["status"] != "done" {
		t.Fatalf("job from upload ended %v", rec["status"])
	}
	before := blobFiles(t, d.DataDir)
	status, _, body := d.upload(key, path)
	var eb errBody
	if err := json.Unmarshal(body, &eb); err != nil {
		t.Fatalf("upload past the quota: %d %q", status, body)
	}
	checkError(t, status, eb, 507, "/v2/upload")
	if !strings.Contains(eb.Message, "quota") {
		t.Errorf("quota message %q does not say so", eb.Message)
	}
	if got := blobFiles(t, d.DataDir); !slices.Equal(got, before) {
		t.Errorf("refused upload left files: %v, before %v", got, before)
	}
	// A new live session would record: refused too (507).
	var leb errBody
	status, _ = d.postJSON("/v2/live", key, map[string]any{}, &leb)
	checkError(t, status, leb, 507, "/v2/live")
	var f struct{ ID string }
	d.postJSON("/v2/pre-recorded", key, map[string]any{"audio_url": "http://" + ln.Addr().String() + "/call.wav"}, &f)
	rec := d.waitJob(key, f.ID, time.Minute)
	msg, _ := rec["post_session_metadata"].(map[string]any)["error"].(string)
	if rec["status"] != "error" || rec["error_code"] != 507.0 || !strings.Contains(msg, "quota") {
		t.Errorf("fetch past the quota: %v %v %q, want error 507 naming the quota", rec["status"], rec["error_code"], msg)
	}
	if status, _, body := d.upload(other, path); status != 200 {
		t.Errorf("another account's upload: %d %s", status, body)
	}
	if status, _ := d.do("DELETE", "/v2/files/"+ups[1].AudioMetadata.ID, key, nil, "", nil); status != 202 {
		t.Fatalf("DELETE file: %d", status)
	}
	if status, _, body := d.upload(key, path); status != 200 {
		t.Errorf("upload after freeing room: %d %s", status, body)
	}
}
