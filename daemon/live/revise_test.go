package live

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/store"
)

// revisedSession runs the speech file's first 4 s through a session created with
// body, stopped at its end, and returns the messages its client got and
// its stored job.
func revisedSession(t *testing.T, s *Service, db store.Store, keyID string, body map[string]any) ([]map[string]any, *store.Job) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.CreateLive(t.Context(), "acme", keyID, "", b, "")
	if err != nil {
		t.Fatal(err)
	}
	l := &listener{}
	sess, err := s.AttachLive(t.Context(), c.Token, "127.0.0.1:1", l)
	if err != nil {
		t.Fatal(err)
	}
	pcm := speechPCM(t)
	pcm = pcm[:min(len(pcm), 4*2*16000)] // "printing, in the only sense with which we are at present concerned"
	for off := 0; off < len(pcm); off += 3200 {
		if err := sess.Write(t.Context(), pcm[off:min(off+3200, len(pcm))]); err != nil {
			t.Fatalf("write at %d: %v", off, err)
		}
	}
	if err := sess.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitDone(t, sess)
	var msgs []map[string]any
	for _, m := range l.all() {
		var v map[string]any
		if err := json.Unmarshal([]byte(m), &v); err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, v)
	}
	j, err := db.Job(c.ID)
	if err != nil {
		t.Fatal(err)
	}
	return msgs, j
}

// revisionCounts reads earshot_live_revisions_total by outcome.
func revisionCounts(s *Service) map[string]float64 {
	out := map[string]float64{}
	for _, o := range []string{revisionSent, revisionDropped, revisionFailed} {
		var m dto.Metric
		if err := s.revisions.WithLabelValues(o).Write(&m); err == nil {
			out[o] = m.GetCounter().GetValue()
		}
	}
	return out
}

// TestRevisedTranscripts: a session asking for revised finals
// (messages_config.receive_revised_transcripts) gets, after the finals of
// each decoder segment, one revised_transcript naming exactly those
// finals' IDs, every final named once, all before post_transcript; the
// revision's words are the stored record's, and the callback asking for
// them (callback_config) gets them too. With the switches off (the
// default) no segment is decoded again: no reviser, no revision counted,
// no message.
func TestRevisedTranscripts(t *testing.T) {
	// The revision decodes on a niced thread (recognizer.CPU.BatchDecode),
	// which other packages' tests on a loaded machine leave a tenth of a
	// core: the end waits for it as long as the test may run.
	defer func(d time.Duration) { revisionEndWait = d }(revisionEndWait)
	revisionEndWait = time.Hour
	s, db, _ := testService(t, nil)
	_, key, err := db.CreateKey("acme", store.KeyGrant{})
	if err != nil {
		t.Fatal(err)
	}
	before := revisionCounts(s)
	msgs, j := revisedSession(t, s, db, key.ID, map[string]any{
		"messages_config": map[string]any{"receive_revised_transcripts": true},
		"callback":        true,
		"callback_config": map[string]any{"url": "http://127.0.0.1:9/hook", "receive_revised_transcripts": true, "receive_final_transcripts": false},
	})
	var open, named []string // finals sent and not yet revised; finals named by revisions
	var revisedWords []string
	revisions, ended := 0, false
	for i, m := range msgs {
		data, _ := m["data"].(map[string]any)
		switch m["type"] {
		case typeTranscript:
			if data["is_final"] == true {
				open = append(open, data["id"].(string))
			}
		case typeRevisedTranscript:
			revisions++
			if ended {
				t.Errorf("message %d: revised_transcript after post_transcript", i)
			}
			var replaces []string
			for _, id := range data["replaces"].([]any) {
				replaces = append(replaces, id.(string))
			}
			if !slices.Equal(replaces, open) {
				t.Errorf("message %d: revision replaces %v, want the finals sent since the last one %v", i, replaces, open)
			}
			named = append(named, replaces...)
			open = nil
			for _, u := range data["utterances"].([]any) {
				revisedWords = append(revisedWords, u.(map[string]any)["text"].(string))
			}
		case typePostTranscript:
			ended = true
		}
	}
	if revisions == 0 || len(open) != 0 || !ended {
		t.Fatalf("%d revisions naming %v; finals never revised %v; post_transcript %v; counted %v (before %v)", revisions, named, open, ended, revisionCounts(s), before)
	}
	if got, want := fullTranscript(t, j), strings.ToLower(strings.Join(revisedWords, " ")); got != want {
		t.Errorf("stored record %q, want the revisions' %q", got, want)
	}
	if !strings.Contains(fullTranscript(t, j), "sense") {
		t.Errorf("revised record %q", fullTranscript(t, j))
	}
	after := revisionCounts(s)
	if after[revisionSent]-before[revisionSent] != float64(revisions) || after[revisionDropped] != before[revisionDropped] || after[revisionFailed] != before[revisionFailed] {
		t.Errorf("revisions counted %v (before %v), want %d sent", after, before, revisions)
	}
	ds, err := db.DueDeliveries(time.Now().Add(time.Hour), 1000)
	if err != nil {
		t.Fatal(err)
	}
	callbacks := 0
	for _, d := range ds {
		if d.JobID == j.ID && strings.Contains(string(d.Body), `"event":"live.revised_transcript"`) {
			callbacks++
		}
	}
	if callbacks != revisions {
		t.Errorf("%d revised_transcript callbacks, want %d", callbacks, revisions)
	}

	// Off, the default.
	msgs, j = revisedSession(t, s, db, key.ID, map[string]any{})
	for _, m := range msgs {
		if m["type"] == typeRevisedTranscript {
			t.Errorf("a revised_transcript with the switch off: %v", m)
		}
	}
	if got := revisionCounts(s); got[revisionSent] != after[revisionSent] || got[revisionDropped] != after[revisionDropped] || got[revisionFailed] != after[revisionFailed] {
		t.Errorf("with the switch off, revisions counted %v (before %v)", got, after)
	}
	if !strings.Contains(fullTranscript(t, j), "sense") {
		t.Errorf("record %q", fullTranscript(t, j))
	}
}

// TestWantsRevisions: either switch asks for revised finals (the
// callback's only with callback on); pii_redaction turns them off.
func TestWantsRevisions(t *testing.T) {
	for _, c := range []struct {
		ws, cb, callback, pii, want bool
	}{
		{want: false},
		{ws: true, want: true},
		{cb: true, want: false},
		{cb: true, callback: true, want: true},
		{ws: true, pii: true, want: false},
	} {
		p := &params.Live{Callback: c.callback, PIIRedaction: c.pii}
		p.MessagesConfig.ReceiveRevisedTranscripts = c.ws
		p.CallbackConfig.ReceiveRevisedTranscripts = c.cb
		if got := wantsRevisions(p); got != c.want {
			t.Errorf("%+v: wantsRevisions %v", c, got)
		}
	}
}
