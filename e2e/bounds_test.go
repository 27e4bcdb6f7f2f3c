package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// defaultMaxListBytes is api.max_list_bytes' default (README, Limits and quotas).
const defaultMaxListBytes = 8 << 20

// uploadNamed uploads the file at path as the multipart field "audio"
// under filename.
func (d *daemonProc) uploadNamed(key, path, filename string) (int, []byte) {
	d.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="audio"; filename="%s"`, filename))
	h.Set("Content-Type", "audio/wav")
	fw, err := mw.CreatePart(h)
	if err != nil {
		d.t.Fatal(err)
	}
	audio, err := os.ReadFile(path)
	if err != nil {
		d.t.Fatal(err)
	}
	fw.Write(audio)
	mw.Close()
	return d.do("POST", "/v2/upload", key, &buf, mw.FormDataContentType(), nil)
}

func mustRequest(t *testing.T, method, url, key string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-service-key", key)
	return req
}

// waitLoaded polls the daemon's /metrics (a minute at most) until its
// decoder pools have loaded in the background (earshot_decoders_loading
// 0), so that a measure of its memory or CPU does not count the loads.
func waitLoaded(t *testing.T, d *daemonProc) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; {
		if n, ok := metricValue(t, d, "earshot_decoders_loading"); ok && n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("decoders still loading a minute after start")
		}
		time.Sleep(100 * time.Millisecond) // polling interval against a real process
	}
}

// rssBytes is the resident set of process pid (/proc/<pid>/status VmRSS).
func rssBytes(t *testing.T, pid int) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc status")
	return 0
}

// TestStoredStringsAndListsBounded is finding 3 of issue 13: a huge upload
// filename is refused before it is stored, and a list answer is bounded in
// size (a page stops at api.max_list_bytes and its next link goes on) and
// streamed, so repeated concurrent lists of large records do not grow the
// daemon's memory.
func TestStoredStringsAndListsBounded(t *testing.T) {
	d := startDaemon(t, "", "limits:\n  requests_per_second: 0\n")
	key := createKey(t, d.DataDir, "acme")
	wav, _ := clip(t, "pocketsphinx-goforward.wav")

	t.Run("filename", func(t *testing.T) {
		var eb errBody
		status, body := d.uploadNamed(key, wav, strings.Repeat("n", 900<<10)+".wav")
		json.Unmarshal(body, &eb)
		checkError(t, status, eb, 400, "900 KiB filename")
		if !strings.Contains(strings.Join(eb.ValidationErrors, " "), "filename") {
			t.Errorf("900 KiB filename: validation_errors %q do not name the filename", eb.ValidationErrors)
		}
		name := strings.Repeat("n", 251) + ".wav" // 255 bytes: the bound itself
		if status, body := d.uploadNamed(key, wav, name); status != 200 || !bytes.Contains(body, []byte(name)) {
			t.Errorf("255-byte filename: %d %.200s", status, body)
		}
	})

	// 150 jobs of about 60 KB each (custom_metadata, prompts and context
	// at their bounds): 9 MB of records, over the default page bound.
	const jobs = 150
	meta := map[string]string{}
	for i := range 15 {
		meta[fmt.Sprintf("k%02d", i)] = strings.Repeat("m", 1000)
	}
	prompts := make([]string, 10)
	for i := range prompts {
		prompts[i] = strings.Repeat("p", 4000)
	}
	req := map[string]any{
		"audio_url":           "http://127.0.0.1:9/absent.wav",
		"custom_metadata":     meta,
		"audio_to_llm":        true,
		"audio_to_llm_config": map[string]any{"prompts": prompts},
		"translation":         true,
		"translation_config":  map[string]any{"target_languages": []string{"fr"}, "context": strings.Repeat("c", 4000)},
	}
	created := map[string]bool{}
	for range jobs {
		var j struct{ ID string }
		if status, body := d.postJSON("/v2/pre-recorded", key, req, &j); status != 201 {
			t.Fatalf("create: %d %.300s", status, body)
		}
		created[j.ID] = true
	}

	type page struct {
		Next  *string           `json:"next"`
		Items []json.RawMessage `json:"items"`
	}
	t.Run("page bound and next", func(t *testing.T) {
		seen := map[string]bool{}
		path := "/v2/pre-recorded?limit=1000"
		pages := 0
		for {
			var p page
			status, body := d.do("GET", path, key, nil, "", &p)
			if status != 200 {
				t.Fatalf("GET %s: %d %.300s", path, status, body)
			}
			pages++
			largest := 0
			for _, it := range p.Items {
				largest = max(largest, len(it))
				var rec struct{ ID string }
				json.Unmarshal(it, &rec)
				if seen[rec.ID] || !created[rec.ID] {
					t.Fatalf("page %d: job %q repeated or unknown", pages, rec.ID)
				}
				seen[rec.ID] = true
			}
			if len(body) > defaultMaxListBytes+largest+4096 {
				t.Errorf("page %d: %d bytes, over the %d-byte bound", pages, len(body), defaultMaxListBytes)
			}
			if p.Next == nil {
				break
			}
			path = strings.TrimPrefix(*p.Next, d.Base)
		}
		if len(seen) != jobs || pages < 2 {
			t.Errorf("%d pages listed %d of %d jobs; want every job over at least 2 pages", pages, len(seen), jobs)
		}
	})

	t.Run("memory", func(t *testing.T) {
		pid := d.cmd.Process.Pid
		list := func() {
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					resp, err := freshClient().Do(mustRequest(t, "GET", d.Base+"/v2/pre-recorded?limit=1000", key))
					if err != nil {
						t.Error(err)
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				})
			}
			wg.Wait()
		}
		// The live pools load in the background after start; their
		// decoders are not the lists' memory.
		waitLoaded(t, d)
		before := rssBytes(t, pid)
		for range 5 {
			list()
		}
		after := rssBytes(t, pid)
		t.Logf("daemon RSS %d MiB before, %d MiB after 40 lists of %d records (8 at once)", before>>20, after>>20, jobs)
		// Generous: a list streams chunks of 256 KiB; building answers
		// whole grew RSS by several hundred MiB here.
		if grew := after - before; grew > 128<<20 {
			t.Errorf("RSS grew %d MiB over 40 lists", grew>>20)
		}
	})
}
