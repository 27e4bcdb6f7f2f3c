package live

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestMessageLogBudget feeds a message log what a 40-minute call with
// acknowledgments every 20 ms sends (120,000 acks, a transcript every few
// seconds), then the end of the session: the log stays within its budget,
// keeps transcripts ahead of acks, keeps every message of the end, and says
// what it left out.
func TestMessageLogBudget(t *testing.T) {
	const budget = 64 << 10
	l := newMessageLog(budget)
	ack := []byte(`{"type":"audio_chunk","session_id":"s","created_at":"2026-11-24T00:00:00.000Z","acknowledged":true,"error":null,"data":{"byte_range":[1000,1640],"time_range":[0.1,0.12]}}`)
	transcripts := 0
	for i := range 120000 {
		l.add("audio_chunk", ack)
		if i%250 == 0 {
			l.add("transcript", fmt.Appendf(nil, `{"type":"transcript","data":{"id":"%d","is_final":true}}`, i))
			transcripts++
		}
	}
	l.close("s")
	big := strings.Repeat("x", 2*budget) // a post_final_transcript larger than the budget
	for _, typ := range []string{"end_recording", "post_transcript", "post_final_transcript", "post_final_transcript", "end_session"} {
		l.add(typ, fmt.Appendf(nil, `{"type":%q,"pad":%q}`, typ, big))
	}

	got := map[string]int{}
	before := 0
	var omitted map[string]any
	for i, m := range l.messages() {
		var h struct {
			Type string         `json:"type"`
			Data map[string]any `json:"data"`
		}
		if err := json.Unmarshal([]byte(m), &h); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		got[h.Type]++
		if h.Type == omittedType {
			omitted = h.Data
		}
		if omitted == nil {
			before += len(m)
		}
	}
	if before > budget {
		t.Errorf("%d bytes kept before the end, budget %d", before, budget)
	}
	if got["transcript"] != transcripts {
		t.Errorf("%d of %d transcripts kept", got["transcript"], transcripts)
	}
	if got["audio_chunk"] == 0 || got["audio_chunk"]*len(ack) > budget/4 {
		t.Errorf("%d acks kept (%d bytes), want some, at most a quarter of %d", got["audio_chunk"], got["audio_chunk"]*len(ack), budget)
	}
	for _, typ := range []string{"end_recording", "post_transcript", "end_session"} {
		if got[typ] != 1 {
			t.Errorf("%d %s kept, want 1", got[typ], typ)
		}
	}
	if got["post_final_transcript"] != 2 {
		t.Errorf("%d post_final_transcript kept, want 2", got["post_final_transcript"])
	}
	if omitted == nil {
		t.Fatal("no messages_omitted entry")
	}
	types, _ := omitted["types"].(map[string]any)
	if n, _ := omitted["messages"].(float64); int(n) != 120000-got["audio_chunk"] || types["audio_chunk"] != n || omitted["bytes"] != n*float64(len(ack)) {
		t.Errorf("messages_omitted %v, want %d audio_chunk of %d bytes", omitted, 120000-got["audio_chunk"], len(ack))
	}
}
