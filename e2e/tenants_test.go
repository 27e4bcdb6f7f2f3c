package e2e

import (
	"encoding/json"
	"testing"
	"time"
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
