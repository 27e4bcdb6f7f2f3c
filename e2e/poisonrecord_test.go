package e2e

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// decodeNumbers decodes a JSON answer keeping numbers as json.Number: the
// records under test carry numbers float64 cannot hold.
func decodeNumbers(t *testing.T, b []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("decode %q: %v", b, err)
	}
	return m
}

// TestNumbersJSONCannotHold is issue 43 finding 1 with the probe's own
// requests: custom_metadata numbers that are valid JSON but past float64
// (1e309 on /v2/pre-recorded, -1e400 on /v2/live) were answered 201, then
// every read of the job and the account's list answered 500, the worker
// looped on the job so another tenant's job stayed queued, and after a
// restart the daemon refused to start. What the API accepts must read back:
// the job runs, its number comes back as sent, bob's job is done, the
// lists answer, the daemon restarts on the same data, and DELETE works.
func TestNumbersJSONCannotHold(t *testing.T) {
	d := startDaemon(t, "", "")
	alice := createKey(t, d.DataDir, "alice")
	bob := createKey(t, d.DataDir, "bob")
	path, _ := clip(t, "pocketsphinx-goforward.wav")

	status, up, body := d.upload(alice, path)
	if status != 200 {
		t.Fatalf("upload: %d %s", status, body)
	}
	var created struct {
		ID string `json:"id"`
	}
	status, body = d.postJSON("/v2/pre-recorded", alice, `{"audio_url":"`+up.AudioURL+`","custom_metadata":{"x":1e309}}`, &created)
	if status != 201 {
		t.Fatalf("POST /v2/pre-recorded with 1e309: %d %s", status, body)
	}
	status, bup, body := d.upload(bob, path)
	if status != 200 {
		t.Fatalf("bob's upload: %d %s", status, body)
	}
	var bobJob struct {
		ID string `json:"id"`
	}
	if status, body := d.postJSON("/v2/pre-recorded", bob, map[string]any{"audio_url": bup.AudioURL}, &bobJob); status != 201 {
		t.Fatalf("bob's job: %d %s", status, body)
	}
	if rec := d.waitJob(bob, bobJob.ID, 2*time.Minute); rec["status"] != "done" {
		t.Fatalf("bob's job behind alice's: %v", rec)
	}

	aliceJob := func(d *daemonProc) map[string]any {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute)
		for {
			status, body := d.do("GET", "/v2/pre-recorded/"+created.ID, alice, nil, "", nil)
			if status != 200 {
				t.Fatalf("GET alice's job: %d %s", status, body)
			}
			rec := decodeNumbers(t, body)
			if s := rec["status"]; s == "done" || s == "error" || time.Now().After(deadline) {
				return rec
			}
			time.Sleep(100 * time.Millisecond) // polling a real process
		}
	}
	rec := aliceJob(d)
	md, _ := rec["custom_metadata"].(map[string]any)
	if rec["status"] != "done" || md["x"] != json.Number("1e309") {
		t.Fatalf("alice's job: status %v custom_metadata %v; want done with x = 1e309 as sent", rec["status"], rec["custom_metadata"])
	}
	if status, body := d.do("GET", "/v2/pre-recorded?custom_metadata[x]=1e309", alice, nil, "", nil); status != 200 ||
		!strings.Contains(string(body), created.ID) {
		t.Fatalf("list filtered on x=1e309: %d %s", status, body)
	}

	var live struct {
		ID string `json:"id"`
	}
	status, body = d.postJSON("/v2/live", alice, `{"custom_metadata":{"x":-1e400}}`, &live)
	if status != 201 {
		t.Fatalf("POST /v2/live with -1e400: %d %s", status, body)
	}
	listLive := func(d *daemonProc) {
		t.Helper()
		status, body := d.do("GET", "/v2/live", alice, nil, "", nil)
		if status != 200 || !strings.Contains(string(body), `"x":-1e400`) {
			t.Fatalf("GET /v2/live: %d %s; want 200 listing the session with x = -1e400", status, body)
		}
	}
	listLive(d)

	d.Stop()
	d2 := startDaemon(t, d.DataDir, "")
	if rec := aliceJob(d2); rec["status"] != "done" {
		t.Fatalf("alice's job after the restart: %v", rec)
	}
	listLive(d2)
	if status, body := d2.do("GET", "/v2/pre-recorded", alice, nil, "", nil); status != 200 {
		t.Fatalf("list after the restart: %d %s", status, body)
	}
	if status, body := d2.do("DELETE", "/v2/pre-recorded/"+created.ID, alice, nil, "", nil); status/100 != 2 {
		t.Fatalf("DELETE alice's job: %d %s", status, body)
	}
}
