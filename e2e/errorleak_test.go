package e2e

import (
	"bytes"
	"mime/multipart"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestErrorMessagesGeneric: a failed audio_url tells the client its class
// (unreachable, refused by the remote server, not audio), one stable text
// per class whatever the port, status, path or resolver behind it, while
// the log keeps the detail. Before, job errors said "connection refused",
// "status 401", "status 500" and carried ffprobe's blob path.
func TestErrorMessagesGeneric(t *testing.T) {
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/401.wav":
			w.WriteHeader(401)
		case "/500.wav":
			w.WriteHeader(500)
		default:
			w.Header().Set("Content-Type", "audio/wav")
			w.Write(bytes.Repeat([]byte("this is not audio at all\n"), 400))
		}
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	// A port nothing listens on.
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()

	d := startDaemon(t, "", "")
	key := createKey(t, d.DataDir, "acme")
	web := "http://" + ln.Addr().String()
	for _, c := range []struct {
		url, want, logged string
	}{
		{"http://" + closedAddr + "/a.wav", "audio_url: unreachable", "connection refused"},
		{"http://no-such-host.invalid/a.wav", "audio_url: unreachable", "no-such-host.invalid"},
		{web + "/401.wav", "audio_url: refused by the remote server", "status 401"},
		{web + "/500.wav", "audio_url: refused by the remote server", "status 500"},
		{web + "/text.wav", "audio: not a readable audio file", "blobs"},
	} {
		var j struct{ ID string }
		status, body := d.postJSON("/v2/pre-recorded", key, map[string]any{"audio_url": c.url}, &j)
		if status != 201 {
			t.Fatalf("%s: POST %d %s", c.url, status, body)
		}
		rec := d.waitJob(key, j.ID, time.Minute)
		msg, _ := rec["post_session_metadata"].(map[string]any)["error"].(string)
		if rec["status"] != "error" || msg != c.want {
			t.Errorf("%s: job %v with message %q, want error %q", c.url, rec["status"], msg, c.want)
		}
		d.WaitLog(10*time.Second, "job failed", j.ID, c.logged)
	}

	// The same for an upload that is not audio: no path, no tool output.
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("audio", "notes.wav")
	fw.Write(bytes.Repeat([]byte("plain text, not audio\n"), 200))
	mw.Close()
	var eb errBody
	status, _ := d.do("POST", "/v2/upload", key, &buf, mw.FormDataContentType(), &eb)
	if status != 422 || eb.Message != "audio: not a readable audio file" {
		t.Errorf("non-audio upload: %d %q, want 422 with the generic reason", status, eb.Message)
	}
	for _, leak := range []string{d.DataDir, "blobs", "ffprobe", "media:"} {
		if strings.Contains(eb.Message, leak) {
			t.Errorf("upload error %q leaks %q", eb.Message, leak)
		}
	}
}
