package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestLiveMessageBudget runs a WebSocket session that asked for
// acknowledgments under a small live.max_stored_message_bytes: the client
// gets every message, while result.messages keeps acknowledgments only up
// to a quarter of the budget, keeps the transcripts and the whole end of
// the session, and counts what it left out in a messages_omitted entry.
func TestLiveMessageBudget(t *testing.T) {
	const budget = 8192
	d := startDaemon(t, "", "live:\n  max_stored_message_bytes: 8192\n")
	key := createKey(t, d.DataDir, "acme")
	path, _ := clip(t, "pocketsphinx-goforward.wav")
	s := d.createLive(key, map[string]any{"messages_config": map[string]any{"receive_lifecycle_events": true}})
	conn, err := dial(t, s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	done := make(chan struct{})
	var sent []liveMsg
	go func() {
		defer close(done)
		sent, _ = readAll(t, conn, 3*time.Minute)
	}()
	stream(t, conn, pcmOf(t, path), 32, 20, 0) // 20 ms chunks: an ack each
	conn.WriteJSON(map[string]any{"type": "stop_recording"})
	<-done
	var job map[string]any
	if status, b := d.do("GET", "/v2/live/"+s.ID, key, nil, "", &job); status != 200 || job["status"] != "done" {
		t.Fatalf("GET /v2/live/%s after end_session: %d %.300s", s.ID, status, b)
	}
	res, _ := job["result"].(map[string]any)
	stored, _ := res["messages"].([]any)

	sentTypes := map[string]int{}
	for _, m := range sent {
		sentTypes[m.Type]++
	}
	keptTypes := map[string]int{}
	var order []string
	var omitted struct {
		Messages, Bytes, BudgetBytes int
		Types                        map[string]int
	}
	keptAcks := 0
	for _, raw := range stored {
		var m struct {
			Type string          `json:"type"`
			Data json.RawMessage `json:"data"`
		}
		json.Unmarshal([]byte(raw.(string)), &m)
		keptTypes[m.Type]++
		order = append(order, m.Type)
		switch m.Type {
		case "messages_omitted":
			var o struct {
				Messages    int            `json:"messages"`
				Bytes       int            `json:"bytes"`
				BudgetBytes int            `json:"budget_bytes"`
				Types       map[string]int `json:"types"`
			}
			json.Unmarshal(m.Data, &o)
			omitted.Messages, omitted.Bytes, omitted.BudgetBytes, omitted.Types = o.Messages, o.Bytes, o.BudgetBytes, o.Types
		case "audio_chunk":
			keptAcks += len(raw.(string))
		}
	}
	t.Logf("sent %v; kept %v; omitted %+v", sentTypes, keptTypes, omitted)
	if sentTypes["audio_chunk"] < 100 {
		t.Fatalf("the client got %d acks for 20 ms chunks of a 2.8 s clip", sentTypes["audio_chunk"])
	}
	if keptTypes["messages_omitted"] != 1 || omitted.BudgetBytes != budget ||
		omitted.Types["audio_chunk"] != sentTypes["audio_chunk"]-keptTypes["audio_chunk"] || omitted.Messages < omitted.Types["audio_chunk"] {
		t.Errorf("messages_omitted %+v: want one entry counting the %d acks sent and not kept", omitted, sentTypes["audio_chunk"]-keptTypes["audio_chunk"])
	}
	if keptAcks == 0 || keptAcks > budget/4 {
		t.Errorf("%d bytes of acks kept, want some and at most a quarter of %d", keptAcks, budget)
	}
	if keptTypes["transcript"] != sentTypes["transcript"] || keptTypes["transcript"] == 0 {
		t.Errorf("%d of %d transcripts kept", keptTypes["transcript"], sentTypes["transcript"])
	}
	for _, typ := range []string{"end_recording", "post_transcript", "post_final_transcript", "end_session"} {
		if keptTypes[typ] != 1 || sentTypes[typ] != 1 {
			t.Errorf("%s: sent %d, kept %d; want 1 and 1", typ, sentTypes[typ], keptTypes[typ])
		}
	}
	if n := len(order); n < 2 || order[n-2] != "post_final_transcript" || order[n-1] != "end_session" {
		t.Errorf("result.messages ends %v", order[max(0, len(order)-4):])
	}
}

// TestLiveQueuedAcrossRestart: a session created but not yet connected when
// the daemon stops is reloaded at start-up; connecting to it then (same
// token, the new daemon's address) runs a whole session whose record keeps
// its messages.
func TestLiveQueuedAcrossRestart(t *testing.T) {
	d := startDaemon(t, "", "")
	key := createKey(t, d.DataDir, "acme")
	s := d.createLive(key, map[string]any{"messages_config": map[string]any{"receive_lifecycle_events": true}})
	d.Stop()
	d2 := startDaemon(t, d.DataDir, "")
	// The API opens once the session is recovered: before, a client that
	// joined at once could be refused 4404 (CI, 2026-12-02).
	if started, listening := d2.index(`"msg":"daemon started"`), d2.index(`"msg":"api listening"`); started < 0 || listening < started {
		t.Fatalf("the API listened (log line %d) before the daemon had recovered and started (line %d)", listening, started)
	}
	_, token, _ := strings.Cut(s.URL, "/v2/live?")
	url := "ws" + strings.TrimPrefix(d2.Base, "http") + "/v2/live?" + token
	path, _ := clip(t, "pocketsphinx-goforward.wav")
	msgs, code := runSession(t, url, pcmOf(t, path), 32, 0)
	if code != 1000 || len(msgs) == 0 || msgs[len(msgs)-1].Type != "end_session" {
		t.Fatalf("close %d after %d messages", code, len(msgs))
	}
	var job map[string]any
	if status, b := d2.do("GET", "/v2/live/"+s.ID, key, nil, "", &job); status != 200 || job["status"] != "done" {
		t.Fatalf("GET /v2/live/%s: %d %.300s", s.ID, status, b)
	}
	stored, _ := job["result"].(map[string]any)["messages"].([]any)
	if len(stored) < 3 || !strings.Contains(stored[len(stored)-1].(string), `"end_session"`) {
		t.Errorf("result.messages %d entries, ending %v", len(stored), stored[max(0, len(stored)-1):])
	}
}
