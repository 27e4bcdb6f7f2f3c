package e2e

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// loadSessions is how many 8 kHz live sessions
// TestLiveShippedDefaultsUnderLoad streams at once: three times a 2-CPU
// box's CPUs, so the box is short of CPU and the telephone live pool's
// lean search may take segments.
const loadSessions = 6

// maxLoadWER bounds the corpus WER (%) of the live finals of
// TestLiveShippedDefaultsUnderLoad's sessions (172 words): the worst
// measured plus four words (about one more segment of a session on the
// lean search), re-derived when the engine changes. Measured 2026-11-29
// 05:31-05:53 UTC (go test ./e2e -run 'TestLiveShippedDefaultsUnderLoad$',
// 13 runs, on the shared 2-CPU box under other engineers' tests and,
// from 05:44, a CI run of make test beside them): 78 errors (45.35%) in
// six runs, 80 (46.51%) in four, 81 once, 84 (48.84%, one session with
// both its segments lean) twice; 6 or 7 of 11-14 decoder segments on
// the lean search (each session's first segment full, its next lean).
// Unloaded, the same sessions one at a time give 36.05%
// (TestLiveFinalsMatchBatch, mulaw8k): the lean search costs about 16
// words here. The bound: 88 errors (51.16%).
const maxLoadWER = 100 * 88.0 / 172

// loadSession is what one session of TestLiveShippedDefaultsUnderLoad saw.
type loadSession struct {
	id, clip, ref string
	audio         []byte
	msgs          []liveMsg
	code          int
	early         int // finals that came before the stop was sent (logged: it depends on the box's load)
	err           error
}

// run streams s.audio (8 kHz mu-law) at real time in 100 ms binary frames,
// sends stop_recording and reads every message until the close.
func (s *loadSession) run(url string) {
	conn, resp, err := websocket.DefaultDialer.Dial(url, nil)
	if resp != nil {
		resp.Body.Close()
	}
	if err != nil {
		s.err = err
		return
	}
	defer conn.Close()
	var stopped atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		conn.SetReadDeadline(time.Now().Add(3 * time.Minute))
		for {
			_, b, err := conn.ReadMessage()
			if err != nil {
				if ce := (*websocket.CloseError)(nil); errors.As(err, &ce) {
					s.code = ce.Code
				} else {
					s.err = err
				}
				return
			}
			var m liveMsg
			if err := json.Unmarshal(b, &m); err != nil {
				s.err = err
				return
			}
			m.raw = b
			s.msgs = append(s.msgs, m)
			if final(m) != nil && !stopped.Load() {
				s.early++
			}
		}
	}()
	start := time.Now()
	var werr error
	for i, n := 0, 0; i < len(s.audio) && werr == nil; i, n = i+800, n+1 {
		time.Sleep(time.Until(start.Add(time.Duration(n) * 100 * time.Millisecond))) // real-time pace, not settling
		werr = conn.WriteMessage(websocket.BinaryMessage, s.audio[i:min(i+800, len(s.audio))])
	}
	stopped.Store(true)
	conn.WriteJSON(map[string]any{"type": "stop_recording"})
	<-done
	if s.err == nil {
		s.err = werr
	}
}

// final is a final transcript message's text, nil for any other message.
func final(m liveMsg) *string {
	var tr struct {
		IsFinal   bool `json:"is_final"`
		Utterance struct{ Text string }
	}
	if m.Type != "transcript" || json.Unmarshal(m.Data, &tr) != nil || !tr.IsFinal {
		return nil
	}
	return &tr.Utterance.Text
}

// TestLiveShippedDefaultsUnderLoad runs the daemon on the shipped engine
// defaults (startShippedDaemon: the telephone live pool's lean search on,
// pools sized from the CPUs; the telephone model configured, as the .deb
// installs it) and streams loadSessions 8 kHz mu-law sessions at once at
// real time, two of each of accuracyClips: what callers get from a box
// short of CPU. Every session ends normally with the messages PROTOCOL.md
// orders, every frame acked, and its finals; the live finals' corpus WER
// is bounded (maxLoadWER). How many segments took the lean search, and
// how many finals came before a session's audio ended (2-7 of 3-7 on a
// box with other tests, 0-2 beside a CI run), depend on the box's load
// and are logged, not bounded.
func TestLiveShippedDefaultsUnderLoad(t *testing.T) {
	d := startShippedDaemon(t, telephoneModel(t)+"live:\n  max_sessions_per_account: 0\n  max_channels_per_account: 0\n  decoder_share: 1\n")
	key := createKey(t, d.DataDir, "acme")
	sessions := make([]*loadSession, loadSessions)
	for i := range sessions {
		path, ref := clip(t, accuracyClips[i%len(accuracyClips)])
		sessions[i] = &loadSession{clip: accuracyClips[i%len(accuracyClips)], ref: ref, audio: ulawOf(t, path)}
	}
	var wg sync.WaitGroup
	for _, s := range sessions {
		ls := d.createLive(key, map[string]any{"encoding": "wav/ulaw", "sample_rate": 8000, "bit_depth": 8,
			"messages_config": map[string]any{"receive_lifecycle_events": true}})
		s.id = ls.ID
		wg.Go(func() { s.run(ls.URL) })
	}
	wg.Wait()

	var errs, words int
	for i, s := range sessions {
		if s.err != nil || s.code != 1000 {
			t.Errorf("session %d (%s): %v, close code %d after %d messages", i, s.clip, s.err, s.code, len(s.msgs))
			continue
		}
		checkLiveMessages(t, s.msgs, s.id, int64(len(s.audio)), 8, 1) // acks, order, a final
		var finals []string
		for _, m := range s.msgs {
			if f := final(m); f != nil {
				finals = append(finals, *f)
			}
		}
		live := strings.Join(finals, " ")
		rw := recognizertest.Normalize(s.ref)
		e := recognizertest.EditDistance(rw, recognizertest.Normalize(live))
		errs, words = errs+e, words+len(rw)
		var job map[string]any
		d.do("GET", "/v2/live/"+s.id, key, nil, "", &job)
		psm, _ := job["post_session_metadata"].(map[string]any)
		t.Logf("session %d %s: %d errors of %d words, %d finals (%d before the stop), live_search %v: %q",
			i, s.clip, e, len(rw), len(finals), s.early, psm["live_search"], live)
	}
	wer := 100 * float64(errs) / float64(max(words, 1))
	t.Logf("%d sessions at once: live finals' WER %.2f%% (%d errors, %d words); decoder segments lean %v, full %v",
		loadSessions, wer, errs, words, d.metricWith("earshot_live_segments_total", "search", "lean"), d.metricWith("earshot_live_segments_total", "search", "full"))
	if wer > maxLoadWER {
		t.Errorf("live finals' WER %.2f%% under load > %.2f%%", wer, maxLoadWER)
	}
}

// metricWith is the value of the series of name whose label is want, -1
// when /metrics has none.
func (d *daemonProc) metricWith(name, label, want string) float64 {
	d.t.Helper()
	status, b := d.do("GET", "/metrics", "", nil, "", nil)
	if status != 200 {
		d.t.Fatalf("GET /metrics: %d", status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(string(b)))
	if err != nil {
		d.t.Fatal(err)
	}
	return value(fams, name, map[string]string{label: want})
}
