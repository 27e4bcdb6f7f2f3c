package e2e

import (
	"encoding/json"
	"errors"
	"os/exec"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
)

// TestLiveTenantQuota (issue 13, finding 4): one account cannot hold every
// live slot. It gets at most live.max_sessions_per_account sessions (half
// the capacity by default) and then 429, so another account still gets
// one; and a session nobody connects to ends as 408 after
// live.connect_timeout, releasing its slot long before its token expires.
func TestLiveTenantQuota(t *testing.T) {
	d := startDaemon(t, "", "live:\n  capacity: 4\n  connect_timeout: 2s\n")
	hog := createKey(t, d.DataDir, "hog")
	other := createKey(t, d.DataDir, "other")

	held := []liveSession{d.createLive(hog, map[string]any{}), d.createLive(hog, map[string]any{})}
	var eb errBody
	status, body := d.postJSON("/v2/live", hog, map[string]any{}, &eb)
	if status != 429 {
		t.Fatalf("third session of one account with capacity 4: %d %s, want 429", status, body)
	}
	checkError(t, status, eb, 429, "POST /v2/live over the account's quota")
	mine := d.createLive(other, map[string]any{}) // the other account gets its share

	// Nobody connects: each ends as 408 after connect_timeout, not after
	// the hour of its token.
	for _, s := range append(held, mine) {
		key := hog
		if s.ID == mine.ID {
			key = other
		}
		rec := d.waitLive(key, s.ID, 30*time.Second)
		if rec["status"] != "error" || rec["error_code"] != 408.0 {
			t.Errorf("never-connected session %s ended %v %v, want error 408", s.ID, rec["status"], rec["error_code"])
		}
	}
	// The slots are free again.
	for range 2 {
		d.createLive(hog, map[string]any{})
	}
	var list struct{ Items []json.RawMessage }
	if status, body := d.do("GET", "/v2/live?limit=100", hog, nil, "", &list); status != 200 || len(list.Items) != 4 {
		t.Errorf("hog's live jobs: %d, %d items, want 4 (%s)", status, len(list.Items), body)
	}
}

// closeCodeOf reads from c until the server closes it and returns the close
// code (-1 when the read fails otherwise, e.g. past the deadline).
func closeCodeOf(c *websocket.Conn, timeout time.Duration) int {
	c.SetReadDeadline(time.Now().Add(timeout))
	for {
		if _, _, err := c.ReadMessage(); err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				return ce.Code
			}
			return -1
		}
	}
}

// TestRevokeEndsLiveSessions (issue 13, finding 10): revoking a key, over
// HTTP or with the CLI through the admin socket, ends the live sessions it
// created at once (close 4401, job error 401) and refuses their tokens;
// another key of the same account streams on.
func TestRevokeEndsLiveSessions(t *testing.T) {
	d := startDaemon(t, "", "")
	admin := createKey(t, d.DataDir, "admin")
	newKey := func() adminKey {
		var k adminKey
		if status, body := d.postJSON("/admin/keys", admin, map[string]any{"account": "acme"}, &k); status != 201 {
			t.Fatalf("POST /admin/keys: %d %s", status, body)
		}
		return k
	}
	doomed, kept, cliDoomed := newKey(), newKey(), newKey()
	path, _ := clip(t, "ls-test-clean-1089-134686-0000.wav")
	audio := pcmOf(t, path)

	// connect opens a session of key and streams its first second.
	connect := func(key string) (liveSession, *websocket.Conn, chan int) {
		s := d.createLive(key, map[string]any{})
		c, err := dial(t, s.URL)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.WriteMessage(websocket.BinaryMessage, audio[:32000]); err != nil {
			t.Fatal(err)
		}
		code := make(chan int, 1)
		go func() { code <- closeCodeOf(c, 30*time.Second) }()
		return s, c, code
	}
	streaming, sc, streamingCode := connect(doomed.Key)
	defer sc.Close()
	waiting := d.createLive(doomed.Key, map[string]any{})
	other, oc, otherCode := connect(kept.Key)
	defer oc.Close()
	viaCLI, cc, cliCode := connect(cliDoomed.Key)
	defer cc.Close()

	if status, body := d.do("DELETE", "/admin/keys/"+doomed.ID, admin, nil, "", nil); status != 202 {
		t.Fatalf("DELETE /admin/keys/%s: %d %s", doomed.ID, status, body)
	}
	if code := <-streamingCode; code != 4401 {
		t.Errorf("streaming session of the revoked key: close %d, want 4401", code)
	}
	for _, s := range []liveSession{streaming, waiting} {
		c, err := dial(t, s.URL)
		if err != nil {
			t.Fatal(err)
		}
		if code := closeCodeOf(c, 10*time.Second); code != 4401 {
			t.Errorf("token of a revoked key's session %s: close %d, want 4401", s.ID, code)
		}
		c.Close()
		rec := d.waitLive(kept.Key, s.ID, 10*time.Second)
		if rec["status"] != "error" || rec["error_code"] != 401.0 {
			t.Errorf("session %s of the revoked key ended %v %v, want error 401", s.ID, rec["status"], rec["error_code"])
		}
	}

	// The CLI revokes through the running daemon's admin socket.
	if out, err := exec.Command(earshotd, "keys", "revoke", "--data-dir", d.DataDir, "--id", cliDoomed.ID).CombinedOutput(); err != nil {
		t.Fatalf("keys revoke: %v %s", err, out)
	}
	if code := <-cliCode; code != 4401 {
		t.Errorf("session of the key revoked with the CLI: close %d, want 4401", code)
	}
	if rec := d.waitLive(kept.Key, viaCLI.ID, 10*time.Second); rec["error_code"] != 401.0 {
		t.Errorf("session of the key revoked with the CLI ended %v %v, want error 401", rec["status"], rec["error_code"])
	}

	// The other key's session was untouched: it finishes normally.
	if err := oc.WriteJSON(map[string]any{"type": "stop_recording"}); err != nil {
		t.Fatal(err)
	}
	if code := <-otherCode; code != 1000 {
		t.Errorf("session of the kept key: close %d, want 1000", code)
	}
	if rec := d.waitLive(kept.Key, other.ID, 10*time.Second); rec["status"] != "done" {
		t.Errorf("session of the kept key ended %v %v", rec["status"], rec["error_code"])
	}
}
