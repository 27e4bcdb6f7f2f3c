package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
)

// securityLimits makes the limits small enough to hit in a test.
const securityLimits = `
limits:
  max_body_bytes: 4096
  max_upload_bytes: 200000
live:
  max_frame_bytes: 4096
  max_messages_per_second: 50
`

// TestCrossAccount: every endpoint that names a job or a file answers 401 to
// another account's key, to no key and to a garbage key, and the owner's
// data is untouched afterwards; lists never show another account's jobs.
func TestCrossAccount(t *testing.T) {
	d := startDaemon(t, "", "")
	key := createKey(t, d.DataDir, "acme")
	other := createKey(t, d.DataDir, "mallory")
	path, _ := clip(t, "pocketsphinx-goforward.wav")
	_, up, _ := d.upload(key, path)
	var pre struct{ ID string }
	if status, body := d.postJSON("/v2/pre-recorded", key, map[string]any{"audio_url": up.AudioURL}, &pre); status != 201 {
		t.Fatalf("create: %d %s", status, body)
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
	d.waitJob(key, pre.ID, 2*time.Minute)

	routes := []struct{ method, path string }{
		{"GET", "/v2/pre-recorded/" + pre.ID},
		{"GET", "/v2/pre-recorded/" + pre.ID + "/file"},
		{"DELETE", "/v2/pre-recorded/" + pre.ID},
		{"DELETE", "/v2/transcription/" + pre.ID},
		{"GET", "/v2/files/" + up.AudioMetadata.ID},
		{"GET", "/v2/live/" + live.ID},
		{"GET", "/v2/live/" + live.ID + "/file"},
		{"DELETE", "/v2/live/" + live.ID},
		{"DELETE", "/v2/transcription/" + live.ID},
	}
	for _, k := range []struct{ name, key string }{{"other account", other}, {"no key", ""}, {"unknown key", "es_" + strings.Repeat("0", 40)}} {
		for _, r := range routes {
			var eb errBody
			status, _ := d.do(r.method, r.path, k.key, nil, "", &eb)
			checkError(t, status, eb, 401, k.name+" "+r.method+" "+r.path)
		}
	}
	for _, r := range []struct{ method, path, body string }{
		{"GET", "/v2/pre-recorded", ""}, {"GET", "/v2/live", ""}, {"GET", "/v2/engines", ""},
		{"POST", "/v2/pre-recorded", `{"audio_url":"` + up.AudioURL + `"}`}, {"POST", "/v2/live", `{}`},
	} {
		var eb errBody
		status, _ := d.do(r.method, r.path, "", strings.NewReader(r.body), "application/json", &eb)
		checkError(t, status, eb, 401, "no key "+r.method+" "+r.path)
	}
	for _, list := range []string{"/v2/pre-recorded", "/v2/live"} {
		var page struct{ Items []map[string]any }
		if status, body := d.do("GET", list, other, nil, "", &page); status != 200 || len(page.Items) != 0 {
			t.Errorf("other account's %s: %d %s", list, status, body)
		}
		if status, _ := d.do("GET", list, key, nil, "", &page); status != 200 || len(page.Items) != 1 {
			t.Errorf("owner's %s: %d, %d items, want 1", list, status, len(page.Items))
		}
	}
	// Nothing was deleted by the refused DELETEs.
	for _, p := range []string{"/v2/pre-recorded/" + pre.ID, "/v2/live/" + live.ID, "/v2/live/" + live.ID + "/file", "/v2/files/" + up.AudioMetadata.ID} {
		if status, body := d.do("GET", p, key, nil, "", nil); status != 200 {
			t.Errorf("owner GET %s after refused deletes: %d %.200s", p, status, body)
		}
	}
}

// TestRevocationEverywhere: a revoked key is refused on every endpoint at
// once, while the account's other key keeps working, and a live session
// created with the revoked key can no longer be created.
func TestRevocationEverywhere(t *testing.T) {
	d := startDaemon(t, "", "")
	key := createKey(t, d.DataDir, "acme")
	out, err := runCLI("keys", "list", "--data-dir", d.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	id, _, _ := strings.Cut(strings.TrimSpace(out), "\t") // key is the only key yet
	live := createKey(t, d.DataDir, "acme")
	var pre struct{ ID string }
	path, _ := clip(t, "pocketsphinx-goforward.wav")
	_, up, _ := d.upload(key, path)
	d.postJSON("/v2/pre-recorded", key, map[string]any{"audio_url": up.AudioURL}, &pre)
	if _, err := runCLI("keys", "revoke", "--data-dir", d.DataDir, "--id", id); err != nil {
		t.Fatal(err)
	}
	revoked := key
	for _, r := range []struct{ method, path string }{
		{"GET", "/v2/pre-recorded"}, {"GET", "/v2/pre-recorded/" + pre.ID}, {"GET", "/v2/live"},
		{"POST", "/v2/live"}, {"POST", "/v2/pre-recorded"}, {"GET", "/v2/files/" + up.AudioMetadata.ID},
		{"DELETE", "/v2/pre-recorded/" + pre.ID}, {"POST", "/v2/upload"}, {"GET", "/v2/engines"},
	} {
		var eb errBody
		status, _ := d.do(r.method, r.path, revoked, strings.NewReader("{}"), "application/json", &eb)
		checkError(t, status, eb, 401, "revoked "+r.method+" "+r.path)
	}
	if status, body := d.do("GET", "/v2/pre-recorded/"+pre.ID, live, nil, "", nil); status != 200 {
		t.Errorf("the account's other key: %d %s", status, body)
	}
}

// TestTokenReplay: a session's WebSocket token reaches only that session,
// and stops working once the session ended or was deleted.
func TestTokenReplay(t *testing.T) {
	d := startDaemon(t, "", "")
	key := createKey(t, d.DataDir, "acme")
	path, _ := clip(t, "pocketsphinx-goforward.wav")
	audio := pcmOf(t, path)[:16000]
	a := d.createLive(key, map[string]any{})
	b := d.createLive(key, map[string]any{})
	// Audio sent on a's URL lands in a only.
	c, err := dial(t, a.URL)
	if err != nil {
		t.Fatal(err)
	}
	c.WriteMessage(websocket.BinaryMessage, audio)
	c.WriteJSON(map[string]any{"type": "stop_recording"})
	if _, code := readAll(t, c, time.Minute); code != 1000 {
		t.Fatalf("a closed with %d", code)
	}
	c.Close()
	_, wav := d.do("GET", "/v2/live/"+a.ID+"/file", key, nil, "", nil)
	if len(wav) != 44+len(audio) {
		t.Errorf("a stored %d bytes, want %d", len(wav)-44, len(audio))
	}
	var jb map[string]any
	d.do("GET", "/v2/live/"+b.ID, key, nil, "", &jb)
	if jb["status"] != "queued" {
		t.Errorf("b is %v after a's audio, want queued", jb["status"])
	}
	// Replaying a's token after a ended: refused as ended.
	c, err = dial(t, a.URL)
	if err != nil {
		t.Fatal(err)
	}
	if _, code := readAll(t, c, 30*time.Second); code != 4404 {
		t.Errorf("replayed token of an ended session: close %d, want 4404", code)
	}
	c.Close()
	// Grafting a's token onto b's id or mixing the two tokens is refused.
	ta, tb := tokenOf(t, a.URL), tokenOf(t, b.URL)
	for _, tok := range []string{ta[:len(ta)/2] + tb[len(tb)/2:], tb[:len(tb)/2] + ta[len(ta)/2:]} {
		c, err = dial(t, strings.Replace(b.URL, tb, tok, 1))
		if err != nil {
			t.Fatal(err)
		}
		if _, code := readAll(t, c, 30*time.Second); code != 4401 {
			t.Errorf("spliced token: close %d, want 4401", code)
		}
		c.Close()
	}
	// A deleted session's token is refused.
	if status, _ := d.do("DELETE", "/v2/live/"+b.ID, key, nil, "", nil); status != 202 {
		t.Fatalf("delete b: %d", status)
	}
	c, err = dial(t, b.URL)
	if err != nil {
		t.Fatal(err)
	}
	if _, code := readAll(t, c, 30*time.Second); code != 4404 && code != 4401 {
		t.Errorf("deleted session's token: close %d, want 4404", code)
	}
	c.Close()
}

// TestFetchDenied: audio_url at link-local / metadata addresses is refused
// at dial time (the job ends as error without any connection), and an
// audio_url at the daemon's own ops endpoints yields a job error, not a
// transcript of its answer.
func TestFetchDenied(t *testing.T) {
	d := startDaemon(t, "", "")
	key := createKey(t, d.DataDir, "acme")
	for _, u := range []string{
		"http://169.254.169.254/latest/meta-data/iam/security-credentials/",
		"http://[fe80::1]/x.wav",
		"http://0.0.0.0:1/x.wav",
		"http://169.254.169.254.nip.io/x.wav", // resolves (if at all) to a denied address
		d.Base + "/metrics",
		d.Base + "/healthz",
		d.Base + "/v2/pre-recorded",
	} {
		var j struct{ ID string }
		status, body := d.postJSON("/v2/pre-recorded", key, map[string]any{"audio_url": u}, &j)
		if status == 422 || status == 400 {
			continue // refused at once: as good
		}
		if status != 201 {
			t.Fatalf("%s: %d %s", u, status, body)
		}
		rec := d.waitJob(key, j.ID, time.Minute)
		if rec["status"] != "error" {
			t.Errorf("%s: job %v, want error", u, rec["status"])
		}
	}
	d.WaitLog(10*time.Second, "169.254.169.254")
}

// TestHostileHTTP: path traversal, oversized headers and bodies, and slow
// clients.
func TestHostileHTTP(t *testing.T) {
	d := startDaemon(t, "", securityLimits)
	key := createKey(t, d.DataDir, "acme")
	path, _ := clip(t, "pocketsphinx-goforward.wav")

	t.Run("path traversal in ids", func(t *testing.T) {
		for _, p := range []string{
			"/v2/pre-recorded/..%2f..%2fdb", "/v2/pre-recorded/../../etc/passwd", "/v2/files/..%2fdb",
			"/v2/files/%2e%2e", "/v2/live/..%2F..%2Fetc%2Fpasswd/file", "/v2/pre-recorded/%00/file",
			"/v2/files/" + strings.Repeat("a", 5000),
		} {
			status, body := d.do("GET", p, key, nil, "", nil)
			if status != 404 && status != 400 && status != 401 && status != 431 && status != 414 {
				t.Errorf("GET %s: %d %.100s", p, status, body)
			}
		}
	})
	t.Run("path traversal in upload filenames", func(t *testing.T) {
		wav, _ := os.ReadFile(path)
		for _, name := range []string{"../../../../tmp/evil.wav", "..\\..\\evil.wav", "/etc/cron.d/evil.wav", "a\x00b.wav", strings.Repeat("x", 3000) + ".wav"} {
			var buf bytes.Buffer
			mw := multipart.NewWriter(&buf)
			fw, _ := mw.CreateFormFile("audio", name)
			fw.Write(wav)
			mw.Close()
			var up uploadResponse
			status, body := d.do("POST", "/v2/upload", key, &buf, mw.FormDataContentType(), nil)
			if status >= 500 {
				t.Errorf("upload %q: %d %s", name, status, body)
			}
			if status == 200 {
				json.Unmarshal(body, &up)
			}
			// The filename is metadata only; it must not carry a directory.
			if status == 200 && (strings.ContainsAny(up.AudioMetadata.Filename, "/\x00")) {
				t.Errorf("upload %q stored as filename %q", name, up.AudioMetadata.Filename)
			}
		}
		filepath.Walk(d.DataDir, func(p string, info os.FileInfo, err error) error {
			if err == nil && strings.Contains(info.Name(), "evil") {
				t.Errorf("a file named after the upload's filename: %s", p)
			}
			return nil
		})
		if _, err := os.Stat("/tmp/evil.wav"); err == nil {
			t.Errorf("/tmp/evil.wav exists")
		}
	})
	t.Run("oversized header", func(t *testing.T) {
		resp := rawRequest(t, d.Base, "GET /v2/pre-recorded HTTP/1.1\r\nHost: x\r\nx-service-key: "+key+"\r\nx-pad: "+strings.Repeat("a", 64<<10)+"\r\n\r\n")
		if !strings.HasPrefix(resp, "HTTP/1.1 431") && !strings.HasPrefix(resp, "HTTP/1.1 413") && !strings.HasPrefix(resp, "HTTP/1.1 400") {
			t.Errorf("64 KiB header: %.100q, want 431", resp)
		}
	})
	t.Run("oversized bodies", func(t *testing.T) {
		var eb errBody
		big := `{"audio_url":"http://example.com/a.wav","custom_metadata":{"x":"` + strings.Repeat("a", 8192) + `"}}`
		status, _ := d.postJSON("/v2/pre-recorded", key, big, &eb)
		checkError(t, status, eb, 413, "8 KiB JSON body")
		status, _ = d.postJSON("/v2/live", key, big, &eb)
		checkError(t, status, eb, 413, "8 KiB live body")
		long, _ := clip(t, "ljspeech-LJ001-0001.wav") // 309 KB > 200000
		// The daemon may answer 413 before reading the body and close; the
		// client then sees either the 413 or a reset while still sending.
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		fw, _ := mw.CreateFormFile("audio", "long.wav")
		wav, _ := os.ReadFile(long)
		fw.Write(wav)
		mw.Close()
		req, _ := http.NewRequest("POST", d.Base+"/v2/upload", &buf)
		req.Header.Set("x-service-key", key)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		if resp, err := http.DefaultClient.Do(req); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 413 {
				t.Errorf("upload over max_upload_bytes: %d %s", resp.StatusCode, b)
			}
		}
		// The daemon still serves.
		if status, _, body := d.upload(key, path); status != 200 {
			t.Errorf("upload after the refusals: %d %s", status, body)
		}
	})
	t.Run("slow clients do not starve others", func(t *testing.T) {
		var conns []net.Conn
		for range 200 {
			c, err := net.Dial("tcp", strings.TrimPrefix(d.Base, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(c, "POST /v2/pre-recorded HTTP/1.1\r\nHost: x\r\nx-service-key: %s\r\nContent-Length: 100\r\n", key) // headers never finished
			conns = append(conns, c)
		}
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		start := time.Now()
		for range 20 {
			if status, _ := d.do("GET", "/v2/pre-recorded?limit=1", key, nil, "", nil); status != 200 {
				t.Fatalf("list while 200 slow clients hang: %d", status)
			}
		}
		if el := time.Since(start); el > 5*time.Second {
			t.Errorf("20 requests took %s with 200 slow clients", el)
		}
	})
}

// TestWebSocketFloods: frames over the size limit and message floods close
// the offending socket with the documented codes, while another session
// streams on undisturbed.
func TestWebSocketFloods(t *testing.T) {
	d := startDaemon(t, "", securityLimits)
	key := createKey(t, d.DataDir, "acme")
	path, _ := clip(t, "pocketsphinx-goforward.wav")
	audio := pcmOf(t, path)

	good := d.createLive(key, map[string]any{})
	gc, err := dial(t, good.URL)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var goodMsgs []liveMsg
	var goodCode int
	wg.Add(1)
	go func() {
		defer wg.Done()
		goodMsgs, goodCode = readAllNoFatal(gc, 2*time.Minute)
	}()

	flood := func(name string, want int, send func(c *websocket.Conn) error) {
		t.Run(name, func(t *testing.T) {
			s := d.createLive(key, map[string]any{})
			c, err := dial(t, s.URL)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			done := make(chan struct{})
			go func() {
				defer close(done)
				for send(c) == nil {
				}
			}()
			_, code := readAllNoFatal(c, 30*time.Second)
			c.Close()
			<-done
			if code != want {
				t.Errorf("close %d, want %d", code, want)
			}
			// The well-behaved session's socket still answers promptly.
			if err := gc.WriteMessage(websocket.BinaryMessage, audio[:3200]); err != nil {
				t.Errorf("good session: %v", err)
			}
		})
	}
	flood("message flood", 4400, func(c *websocket.Conn) error { return c.WriteMessage(websocket.BinaryMessage, audio[:320]) })
	flood("text flood", 4400, func(c *websocket.Conn) error {
		return c.WriteMessage(websocket.TextMessage, []byte(`{"type":"audio_chunk","data":{"chunk":"AAAA"}}`))
	})
	flood("huge frames", 4413, func(c *websocket.Conn) error { return c.WriteMessage(websocket.BinaryMessage, make([]byte, 1<<20)) })
	flood("huge fragmented message", 4413, func(c *websocket.Conn) error {
		w, err := c.NextWriter(websocket.BinaryMessage)
		if err != nil {
			return err
		}
		for range 64 {
			if _, err := w.Write(make([]byte, 1024)); err != nil {
				return err
			}
		}
		return w.Close()
	})
	if status, _ := d.do("GET", "/healthz", "", nil, "", nil); status != 200 {
		t.Errorf("healthz after floods: %d", status)
	}
	gc.WriteJSON(map[string]any{"type": "stop_recording"})
	wg.Wait()
	gc.Close()
	if goodCode != 1000 {
		t.Errorf("good session closed with %d, want 1000 (%d messages)", goodCode, len(goodMsgs))
	}
}

// readAllNoFatal is readAll for other goroutines: it reports the close
// code (0 on a non-close error) instead of failing the test.
func readAllNoFatal(c *websocket.Conn, timeout time.Duration) ([]liveMsg, int) {
	var msgs []liveMsg
	c.SetReadDeadline(time.Now().Add(timeout))
	for {
		_, b, err := c.ReadMessage()
		if err != nil {
			if ce, ok := err.(*websocket.CloseError); ok {
				return msgs, ce.Code
			}
			return msgs, 0
		}
		var m liveMsg
		json.Unmarshal(b, &m)
		msgs = append(msgs, m)
	}
}

// runCLI runs earshotd with args and returns its standard output.
func runCLI(args ...string) (string, error) {
	out, err := exec.Command(earshotd, args...).Output()
	return string(out), err
}

// rawRequest writes req on a new connection and returns the response's
// first bytes (or "" if the server closed without answering).
func rawRequest(t *testing.T, base, req string) string {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	go io.WriteString(c, req) // the server may answer before reading it all
	line, _ := bufio.NewReader(c).ReadString('\n')
	return line
}
