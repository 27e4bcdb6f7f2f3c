package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
)

// TestDeleteTranscription: the deprecated DELETE /v2/transcription/{id}
// (SPEC.md 4.4) deletes a job of either kind with all its data: 202 with
// an empty body (PROTOCOL.md), then the record, its audio and its place in
// the list are gone (404 as an unknown id, the file off the disk), a second
// delete is 404, and the account's other job is untouched.
func TestDeleteTranscription(t *testing.T) {
	d := startDaemon(t, "", "")
	key := createKey(t, d.DataDir, "acme")
	path, _ := clip(t, "pocketsphinx-goforward.wav")
	_, up, _ := d.upload(key, path)
	var pre, kept struct{ ID string }
	for _, j := range []*struct{ ID string }{&pre, &kept} {
		if status, body := d.postJSON("/v2/pre-recorded", key, map[string]any{"audio_url": up.AudioURL}, j); status != 201 {
			t.Fatalf("create: %d %s", status, body)
		}
	}
	live := d.createLive(key, map[string]any{})
	c, err := dial(t, live.URL)
	if err != nil {
		t.Fatal(err)
	}
	c.WriteMessage(websocket.BinaryMessage, pcmOf(t, path)[:32000])
	c.WriteJSON(map[string]any{"type": "stop_recording"})
	readAll(t, c, time.Minute)
	c.Close()
	for _, id := range []string{pre.ID, kept.ID} {
		if rec := d.waitJob(key, id, 2*time.Minute); rec["status"] != "done" {
			t.Fatalf("job %s ended %v %v", id, rec["status"], rec["error_code"])
		}
	}

	for _, j := range []struct{ kind, id, blob string }{
		{"pre-recorded", pre.ID, "job-" + pre.ID},
		{"live", live.ID, "live-" + live.ID + ".wav"},
	} {
		record := "/v2/" + j.kind + "/" + j.id
		blob := filepath.Join(d.DataDir, "blobs", j.blob)
		if status, body := d.do("GET", record+"/file", key, nil, "", nil); status != 200 || len(body) == 0 {
			t.Fatalf("%s audio before the delete: %d, %d bytes", j.kind, status, len(body))
		}
		if _, err := os.Stat(blob); err != nil {
			t.Fatalf("%s audio file before the delete: %v", j.kind, err)
		}
		if status, body := d.do("DELETE", "/v2/transcription/"+j.id, key, nil, "", nil); status != 202 || len(body) != 0 {
			t.Fatalf("DELETE /v2/transcription/%s (%s): %d %q, want 202 and no body", j.id, j.kind, status, body)
		}
		for _, p := range []string{record, record + "/file"} {
			var eb errBody
			status, _ := d.do("GET", p, key, nil, "", &eb)
			checkError(t, status, eb, 404, "GET "+p+" after the delete")
		}
		if _, err := os.Stat(blob); !os.IsNotExist(err) {
			t.Errorf("%s audio still on disk after the delete: %v", j.kind, err)
		}
		var page struct{ Items []struct{ ID string } }
		d.do("GET", "/v2/"+j.kind+"?limit=1000", key, nil, "", &page)
		if slices.ContainsFunc(page.Items, func(it struct{ ID string }) bool { return it.ID == j.id }) {
			t.Errorf("%s job %s still listed after the delete", j.kind, j.id)
		}
		var eb errBody
		status, _ := d.do("DELETE", "/v2/transcription/"+j.id, key, nil, "", &eb)
		checkError(t, status, eb, 404, "second DELETE /v2/transcription/"+j.id)
	}
	// Only the named jobs went: the other job, its result and the upload
	// it was made from are still there.
	var rec map[string]any
	if status, body := d.do("GET", "/v2/pre-recorded/"+kept.ID, key, nil, "", &rec); status != 200 || rec["result"] == nil {
		t.Errorf("the other job after the deletes: %d %.200s", status, body)
	}
	for _, p := range []string{"/v2/pre-recorded/" + kept.ID + "/file", "/v2/files/" + up.AudioMetadata.ID} {
		if status, _ := d.do("GET", p, key, nil, "", nil); status != 200 {
			t.Errorf("GET %s after the deletes: %d", p, status)
		}
	}
}
