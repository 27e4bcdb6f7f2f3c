package e2e

import (
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const smallUploads = `
limits:
  max_upload_bytes: 200000
`

func TestBadInput(t *testing.T) {
	d := startDaemon(t, "", smallUploads)
	key := createKey(t, d.DataDir, "acme")
	other := createKey(t, d.DataDir, "globex")
	small, _ := clip(t, "pocketsphinx-goforward.wav") // 89 kB
	big, _ := clip(t, "ls-test-clean-1089-134686-0000.wav")
	_, up, _ := d.upload(key, small)
	var job struct{ ID string }
	if status, body := d.postJSON("/v2/pre-recorded", key, map[string]any{"audio_url": up.AudioURL}, &job); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	d.waitJob(key, job.ID, time.Minute)

	const unknownID = "00000000-0000-4000-8000-000000000000"
	cases := []struct {
		name, method, path, key, body string
		want                          int
		mention                       string // the message or a validation error must contain it
	}{
		{"invalid JSON", "POST", "/v2/pre-recorded", key, `{"audio_url":`, 400, ""},
		{"wrong type", "POST", "/v2/pre-recorded", key, `{"audio_url": 5}`, 400, "audio_url"},
		{"missing audio_url", "POST", "/v2/pre-recorded", key, `{}`, 400, "audio_url"},
		{"out of range", "POST", "/v2/pre-recorded", key, `{"audio_url":"` + up.AudioURL + `","diarization_config":{"min_speakers":-1}}`, 400, "min_speakers"},
		{"bad enum", "POST", "/v2/pre-recorded", key, `{"audio_url":"` + up.AudioURL + `","model":"model-9"}`, 400, "model"},
		{"unknown field", "POST", "/v2/pre-recorded", key, `{"audio_url":"` + up.AudioURL + `","colour":"blue"}`, 400, "colour"},
		{"nested unknown field", "POST", "/v2/pre-recorded", key, `{"audio_url":"` + up.AudioURL + `","language_config":{"langs":["en"]}}`, 400, "language_config.langs"},
		{"model-3 without language", "POST", "/v2/pre-recorded", key, `{"audio_url":"` + up.AudioURL + `","model":"model-3"}`, 422, "model-3"},
		{"language not installed", "POST", "/v2/pre-recorded", key, `{"audio_url":"` + up.AudioURL + `","language_config":{"languages":["fr"]}}`, 422, "en"},
		{"not http audio_url", "POST", "/v2/pre-recorded", key, `{"audio_url":"ftp://example/a.wav"}`, 422, "audio_url"},
		{"other account's upload", "POST", "/v2/pre-recorded", other, `{"audio_url":"` + up.AudioURL + `"}`, 422, "audio_url"},
		{"missing key", "GET", "/v2/pre-recorded/" + job.ID, "", "", 401, ""},
		{"unknown key", "GET", "/v2/pre-recorded/" + job.ID, "es_nope", "", 401, ""},
		{"other account's job", "GET", "/v2/pre-recorded/" + job.ID, other, "", 401, ""},
		{"other account's delete", "DELETE", "/v2/pre-recorded/" + job.ID, other, "", 401, ""},
		{"other account's file", "GET", "/v2/pre-recorded/" + job.ID + "/file", other, "", 401, ""},
		{"other account's upload file", "GET", "/v2/files/" + up.AudioMetadata.ID, other, "", 401, ""},
		{"unknown id", "GET", "/v2/pre-recorded/" + unknownID, key, "", 404, ""},
		{"malformed id", "GET", "/v2/pre-recorded/..%2f..%2fetc", key, "", 404, ""},
		{"delete unknown id", "DELETE", "/v2/pre-recorded/" + unknownID, key, "", 404, ""},
		{"deprecated delete, invalid id", "DELETE", "/v2/transcription/not-an-id", key, "", 403, ""},
		{"bad list limit", "GET", "/v2/pre-recorded?limit=0&offset=-1&status=finished&date=yesterday", key, "", 400, "limit"},
		{"unknown route", "GET", "/v2/nothing", key, "", 404, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var eb errBody
			var status int
			if c.method == "POST" {
				status, _ = d.postJSON(c.path, c.key, c.body, &eb)
			} else {
				status, _ = d.do(c.method, c.path, c.key, nil, "", &eb)
			}
			checkError(t, status, eb, c.want, c.path)
			text := eb.Message + " " + strings.Join(eb.ValidationErrors, " | ")
			if c.mention != "" && !strings.Contains(text, c.mention) {
				t.Errorf("error %q does not name %q", text, c.mention)
			}
		})
	}
	t.Run("several problems at once", func(t *testing.T) {
		var eb errBody
		status, _ := d.postJSON("/v2/pre-recorded", key, `{"audio_url":5,"subtitles":"yes","colour":1}`, &eb)
		checkError(t, status, eb, 400, "several")
		if len(eb.ValidationErrors) != 3 {
			t.Errorf("validation_errors = %q, want 3", eb.ValidationErrors)
		}
	})
	t.Run("huge upload", func(t *testing.T) {
		status, _, body := d.upload(key, big)
		if status != 413 || !bytes.Contains(body, []byte(`"statusCode":413`)) {
			t.Errorf("upload over limit: %d %s", status, body)
		}
		if entries, _ := os.ReadDir(filepath.Join(d.DataDir, "blobs")); len(entries) > 2 {
			t.Errorf("blobs after refused upload: %d entries", len(entries))
		}
	})
	t.Run("corrupt upload", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "noise.wav")
		os.WriteFile(bad, append([]byte("RIFF\x10\x00\x00\x00WAVEfmt "), bytes.Repeat([]byte{0xff}, 500)...), 0o600)
		status, _, body := d.upload(key, bad)
		if status != 422 || !bytes.Contains(body, []byte("audio")) {
			t.Errorf("corrupt upload: %d %s", status, body)
		}
	})
	t.Run("corrupt audio_url and unreachable url end as job errors", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Write(bytes.Repeat([]byte("not audio "), 1000))
		}))
		defer srv.Close()
		ln, _ := net.Listen("tcp", "127.0.0.1:0")
		closed := "http://" + ln.Addr().String() + "/gone.wav"
		ln.Close()
		for _, u := range []string{srv.URL + "/x.wav", closed} {
			var j struct{ ID string }
			if status, body := d.postJSON("/v2/pre-recorded", key, map[string]any{"audio_url": u}, &j); status != 201 {
				t.Fatalf("create %s: %d %s", u, status, body)
			}
			rec := d.waitJob(key, j.ID, time.Minute)
			checkRecord(t, rec, j.ID, "error")
			code, _ := rec["error_code"].(float64)
			if code < 400 || code > 499 || rec["result"] != nil {
				t.Errorf("%s: error_code %v result %v", u, rec["error_code"], rec["result"])
			}
			if msg, _ := rec["post_session_metadata"].(map[string]any)["error"].(string); !strings.Contains(msg, "audio") {
				t.Errorf("%s: error message %q", u, msg)
			}
		}
	})
}
