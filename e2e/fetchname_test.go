package e2e

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// maxFilenameBytes is the upload's filename rule (README, Limits and
// quotas), which every stored name follows.
const maxFilenameBytes = 255

// TestFetchedFilenameBounded: the name of a fetched audio_url is stored
// within the upload's 255 bytes, whether the server names it in
// Content-Disposition or the URL path does (shortened on a UTF-8 boundary,
// its extension kept), never with the URL's query; and an answer whose
// headers pass 256 KiB fails its job instead of storing them. Issue 43 finding 5: a 9.5 MB Content-Disposition filename was
// stored whole in ten jobs (earshot.db 8 → 206 MB, 9.5 MB a GET).
func TestFetchedFilenameBounded(t *testing.T) {
	d := startDaemon(t, "", "")
	key := createKey(t, d.DataDir, "acme")
	wavPath, _ := clip(t, "pocketsphinx-goforward.wav")

	longUTF8 := strings.Repeat("é", 150) // 300 bytes
	longPath := strings.Repeat("p", 300)
	files := http.NewServeMux()
	files.HandleFunc("/cd-long", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Disposition", "attachment; filename*=UTF-8''"+url.PathEscape(longUTF8+".wav"))
		http.ServeFile(w, r, wavPath)
	})
	files.HandleFunc("/cd-huge", func(w http.ResponseWriter, r *http.Request) {
		// 1 MiB: under net/http's own 10 MiB bound, over earshot's 256 KiB.
		w.Header().Set("Content-Disposition", `attachment; filename="`+strings.Repeat("h", 1<<20)+`.wav"`)
		http.ServeFile(w, r, wavPath)
	})
	files.HandleFunc("/"+longPath+".wav", func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, wavPath) })
	files.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, wavPath) })
	srv := httptest.NewServer(files)
	defer srv.Close()

	cases := []struct {
		name, path, status string
		want               string // the stored filename when done
	}{
		{"Content-Disposition over 255 bytes", "/cd-long", "done", strings.Repeat("é", 125) + ".wav"},
		{"URL path over 255 bytes", "/" + longPath + ".wav", "done", strings.Repeat("p", 251) + ".wav"},
		{"root path with a query", "/?token=secret", "done", ""},
		{"headers over 256 KiB", "/cd-huge", "error", ""},
	}
	ids := map[string]string{}
	for _, c := range cases {
		var created struct{ ID string }
		if status, body := d.postJSON("/v2/pre-recorded", key, map[string]any{"audio_url": srv.URL + c.path}, &created); status != 201 {
			t.Fatalf("%s: create %d %s", c.name, status, body)
		}
		ids[c.name] = created.ID
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := d.waitJob(key, ids[c.name], 3*time.Minute)
			status, body := d.do("GET", "/v2/pre-recorded/"+ids[c.name], key, nil, "", nil)
			if status != 200 || len(body) > 16<<10 {
				t.Errorf("GET job: %d, %d bytes", status, len(body))
			}
			file, _ := rec["file"].(map[string]any)
			name, _ := file["filename"].(string)
			if len(name) > maxFilenameBytes || !utf8.ValidString(name) {
				t.Errorf("stored filename of %d bytes (valid UTF-8 %v), over the upload's %d-byte rule", len(name), utf8.ValidString(name), maxFilenameBytes)
			}
			if rec["status"] != c.status {
				t.Fatalf("status %v (error_code %v), want %s; filename %d bytes", rec["status"], rec["error_code"], c.status, len(name))
			}
			if c.status == "error" {
				t.Logf("error_code %v: %v", rec["error_code"], rec["error"])
			}
			if c.status == "done" && name != c.want {
				t.Errorf("filename %.20q... (%d bytes), want %.20q... (%d bytes)", name, len(name), c.want, len(c.want))
			}
			if strings.Contains(name, "secret") {
				t.Errorf("filename %q carries the URL's query", name)
			}
		})
	}
	// The list of them stays small too.
	status, body := d.do("GET", "/v2/pre-recorded?limit=10", key, nil, "", nil)
	if status != 200 || len(body) > 64<<10 {
		t.Errorf("list: %d, %d bytes", status, len(body))
	}
}
