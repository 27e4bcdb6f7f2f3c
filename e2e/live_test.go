package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fasthttp/websocket"

	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// liveMsg is any server message.
type liveMsg struct {
	Type         string          `json:"type"`
	SessionID    string          `json:"session_id"`
	CreatedAt    string          `json:"created_at"`
	Acknowledged *bool           `json:"acknowledged"`
	Error        json.RawMessage `json:"error"`
	Data         json.RawMessage `json:"data"`
	raw          []byte
}

type liveSession struct {
	ID        string `json:"id"`
	CreatedAt string `json:"created_at"`
	URL       string `json:"url"`
}

func (d *daemonProc) createLive(key string, body map[string]any) liveSession {
	d.t.Helper()
	var s liveSession
	status, b := d.postJSON("/v2/live", key, body, &s)
	if status != 201 || !uuidRE.MatchString(s.ID) || !strings.HasPrefix(s.URL, "ws://") || !strings.Contains(s.URL, "/v2/live?token=") {
		d.t.Fatalf("POST /v2/live: %d %s", status, b)
	}
	if _, err := time.Parse(time.RFC3339, s.CreatedAt); err != nil {
		d.t.Fatalf("created_at %q", s.CreatedAt)
	}
	return s
}

func dial(t *testing.T, url string) (*websocket.Conn, error) {
	t.Helper()
	c, resp, err := websocket.DefaultDialer.Dial(url, nil)
	if resp != nil {
		resp.Body.Close()
	}
	return c, err
}

// reader collects server messages until the socket closes; it returns the
// messages and the close code.
func readAll(t *testing.T, c *websocket.Conn, timeout time.Duration) ([]liveMsg, int) {
	t.Helper()
	var msgs []liveMsg
	c.SetReadDeadline(time.Now().Add(timeout))
	for {
		mt, b, err := c.ReadMessage()
		if err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				return msgs, ce.Code
			}
			t.Fatalf("read: %v (after %d messages)", err, len(msgs))
		}
		if mt != websocket.TextMessage {
			t.Fatalf("server sent a non-text frame")
		}
		var m liveMsg
		if err := json.Unmarshal(b, &m); err != nil || m.Type == "" {
			t.Fatalf("server frame %q is not a typed JSON object", b)
		}
		m.raw = b
		msgs = append(msgs, m)
	}
}

// pcmOf returns the audio bytes of a 16-bit WAV (after its 44-byte header).
func pcmOf(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte("data"))
	return b[i+8:]
}

// stream sends audio in chunks of chunkMs at pace (0 = as fast as it can),
// alternating binary and base64 text frames.
func stream(t *testing.T, c *websocket.Conn, audio []byte, bytesPerMs, chunkMs int, pace time.Duration) {
	t.Helper()
	step := bytesPerMs * chunkMs
	start := time.Now()
	for i, n := 0, 0; i < len(audio); i, n = i+step, n+1 {
		chunk := audio[i:min(i+step, len(audio))]
		var err error
		if n%2 == 0 {
			err = c.WriteMessage(websocket.BinaryMessage, chunk)
		} else {
			err = c.WriteJSON(map[string]any{"type": "audio_chunk", "data": map[string]any{"chunk": base64.StdEncoding.EncodeToString(chunk)}})
		}
		if err != nil {
			t.Fatalf("send: %v", err)
		}
		if pace > 0 {
			if d := time.Until(start.Add(time.Duration(n+1) * pace)); d > 0 {
				time.Sleep(d) // real-time pacing of the sender, not settling
			}
		}
	}
}

// runSession connects to a session's URL, streams audio in 100 ms chunks
// at pace (0: as fast as it can), sends stop_recording and returns every
// message with the close code.
func runSession(t *testing.T, url string, audio []byte, bytesPerMs int, pace time.Duration) ([]liveMsg, int) {
	t.Helper()
	conn, err := dial(t, url)
	if err != nil {
		t.Fatal(err)
	}
	return runConn(t, conn, audio, bytesPerMs, pace)
}

// runConn is runSession on a connection already open; it closes conn.
func runConn(t *testing.T, conn *websocket.Conn, audio []byte, bytesPerMs int, pace time.Duration) ([]liveMsg, int) {
	t.Helper()
	defer conn.Close()
	done := make(chan struct{})
	var msgs []liveMsg
	var code int
	go func() {
		defer close(done)
		msgs, code = readAll(t, conn, 3*time.Minute)
	}()
	stream(t, conn, audio, bytesPerMs, 100, pace)
	conn.WriteJSON(map[string]any{"type": "stop_recording"})
	<-done
	return msgs, code
}

func TestLiveWebSocket(t *testing.T) {
	// No batch pass: each case reads the stored record as the session
	// leaves it, its live result (the bounds below are the live WER); a
	// pass decoded each session's audio again after it, for no check.
	d := startDaemon(t, "", "live:\n  batch_pass: false\n")
	key := createKey(t, d.DataDir, "acme")
	lsPath, lsRef := clip(t, "ls-test-clean-1089-134686-0000.wav")
	stereoPath, _ := clip(t, "stereo-two-speaker-librispeech.wav")
	// 8 kHz telephony audio: the wideband en-us model does much worse on it
	// (batch WER 0.41 on this clip against 0.05 at 16 kHz).
	tpPath, tpRef := clip(t, "librivox-sense-and-sensibility-01-0870.wav")
	mulaw := filepath.Join(t.TempDir(), "speech.ulaw")
	if out, err := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-i", tpPath, "-ar", "8000", "-ac", "1", "-f", "mulaw", mulaw).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v %s", err, out)
	}
	ulaw, _ := os.ReadFile(mulaw)

	cases := []struct {
		name       string
		body       map[string]any
		audio      []byte
		bytesPerMs int
		pace       time.Duration
		ref        string
		maxWER     float64
		channels   int
	}{
		{"pcm16k realtime", map[string]any{}, pcmOf(t, lsPath), 32, 100 * time.Millisecond, lsRef, werLiveLS, 1},
		{"pcm16k fast", map[string]any{"custom_metadata": map[string]any{"agent": "007"}}, pcmOf(t, lsPath), 32, 0, lsRef, werLiveLS, 1},
		{"mulaw 8k", map[string]any{"encoding": "wav/ulaw", "sample_rate": 8000, "bit_depth": 8}, ulaw, 8, 0, tpRef, werLive8k, 1},
		{"stereo pcm", map[string]any{"channels": 2}, pcmOf(t, stereoPath), 64, 0, "", 0, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := c.body
			// Partials on where the case is paced or stereo; the others
			// keep the WebSocket default (off: finals decoded in one pass).
			partials := c.pace > 0 || c.channels == 2
			body["messages_config"] = map[string]any{"receive_partial_transcripts": partials, "receive_lifecycle_events": true}
			s := d.createLive(key, body)
			var rec map[string]any
			d.do("GET", "/v2/live/"+s.ID, key, nil, "", &rec)
			if rec["status"] != "queued" || rec["kind"] != "live" {
				t.Fatalf("before connecting: %v %v", rec["status"], rec["kind"])
			}
			msgs, code := runSession(t, s.URL, c.audio, c.bytesPerMs, c.pace)
			if code != 1000 {
				t.Fatalf("close code %d, want 1000", code)
			}
			checkLiveMessages(t, msgs, s.ID, int64(len(c.audio)), c.bytesPerMs, c.channels)

			var job map[string]any
			d.do("GET", "/v2/live/"+s.ID, key, nil, "", &job)
			if job["status"] != "done" || job["kind"] != "live" {
				t.Fatalf("job %v", job)
			}
			res := job["result"].(map[string]any)
			stored := res["messages"].([]any)
			if len(stored) != len(msgs) {
				t.Errorf("result.messages has %d, client got %d", len(stored), len(msgs))
			}
			for i := range min(len(stored), len(msgs)) {
				if stored[i].(string) != string(msgs[i].raw) {
					t.Errorf("result.messages[%d] differs from what was sent", i)
					break
				}
			}
			tr := res["transcription"].(map[string]any)
			utts := tr["utterances"].([]any)
			dur := float64(len(c.audio)) / float64(c.bytesPerMs) / 1000
			checkUtterances(t, utts, dur, c.channels)
			if c.ref != "" {
				wer := recognizertest.WER(c.ref, tr["full_transcript"].(string))
				t.Logf("WER %.3f: %s", wer, tr["full_transcript"])
				if wer > c.maxWER {
					t.Errorf("WER %.3f > %.3f", wer, c.maxWER)
				}
			}
			// The stored audio is what was sent, behind a WAV header.
			status, wav := d.do("GET", "/v2/live/"+s.ID+"/file", key, nil, "", nil)
			if status != 200 || len(wav) != 44+len(c.audio) || !bytes.Equal(wav[44:], c.audio) || string(wav[:4]) != "RIFF" {
				t.Errorf("GET file: %d, %d bytes, want 44+%d identical", status, len(wav), len(c.audio))
			}
		})
	}
}

// Bounds of the live WER on TestLiveWebSocket's, TestLiveReconnect's and
// TestTLS's clips: the value measured now plus two words of the clip,
// re-derived when the engine changes. Measured 2026-11-29 05:20-05:31 UTC
// (go test ./e2e -run 'TestLiveWebSocket$|TestLiveReconnect$|TestTLS$',
// two runs, the same in both, on the shared 2-CPU box under other
// engineers' load): on the LibriSpeech clip at 16 kHz 0.179 (5 errors of
// 28 words) in every case, paced with partials, fast without, after a
// reconnect and over WSS; on the LibriVox clip at 8 kHz mu-law on the
// wideband model 0.364 (8 of 22). The bounds: 7 of 28 (0.25) and 10 of 22
// (0.455). Before (2026-11-21, utterances decoded each on its own, before
// segmented finals and the batch pass) the clips measured 0.61-0.68 and
// 0.59, and the bounds were 0.75 and 0.66: a regression to 0.74, 16 lost
// words of 28, passed.
const (
	werLiveLS = 7.0 / 28
	werLive8k = 10.0 / 22
)

// checkLiveMessages checks every message against PROTOCOL.md and the acks'
// ranges against what was sent.
func checkLiveMessages(t *testing.T, msgs []liveMsg, id string, sent int64, bytesPerMs, channels int) {
	t.Helper()
	var types []string
	var acked int64
	finals := 0
	for i, m := range msgs {
		types = append(types, m.Type)
		if m.SessionID != id {
			t.Errorf("message %d session_id %q", i, m.SessionID)
		}
		if _, err := time.Parse(time.RFC3339, m.CreatedAt); err != nil {
			t.Errorf("message %d created_at %q", i, m.CreatedAt)
		}
		var data map[string]any
		if len(m.Data) > 0 {
			json.Unmarshal(m.Data, &data)
		}
		switch m.Type {
		case "audio_chunk":
			var r struct {
				ByteRange [2]int64   `json:"byte_range"`
				TimeRange [2]float64 `json:"time_range"`
			}
			json.Unmarshal(m.Data, &r)
			if m.Acknowledged == nil || !*m.Acknowledged || string(m.Error) != "null" || r.ByteRange[0] != acked || r.ByteRange[1] <= r.ByteRange[0] || r.ByteRange[1] > sent {
				t.Fatalf("ack %d: %s (acked so far %d)", i, m.raw, acked)
			}
			acked = r.ByteRange[1]
			wantT := float64(acked) / float64(bytesPerMs) / 1000
			if d := r.TimeRange[1] - wantT; d > 0.002 || d < -0.002 {
				t.Errorf("ack %d time_range %v, want end %.3f", i, r.TimeRange, wantT)
			}
		case "speech_start", "speech_end":
			if _, ok := data["time"].(float64); !ok || int(data["channel"].(float64)) >= channels {
				t.Errorf("%s: %s", m.Type, m.raw)
			}
		case "transcript":
			u, _ := data["utterance"].(map[string]any)
			if _, ok := data["id"].(string); !ok || u == nil || u["text"] == nil || u["words"] == nil {
				t.Errorf("transcript: %s", m.raw)
			}
			if data["is_final"] == true {
				finals++
			}
		case "stop_recording":
			if data["recording_duration"] == nil || m.Acknowledged == nil || !*m.Acknowledged {
				t.Errorf("stop ack: %s", m.raw)
			}
		case "end_recording":
			if data["recording_duration"] == nil {
				t.Errorf("end_recording: %s", m.raw)
			}
		case "post_transcript":
			if data["full_transcript"] == nil || data["utterances"] == nil {
				t.Errorf("post_transcript: %s", m.raw)
			}
		case "post_final_transcript":
			if data["metadata"] == nil || data["transcription"] == nil {
				t.Errorf("post_final_transcript: %s", m.raw)
			}
		case "start_session", "start_recording", "end_session":
		default:
			t.Errorf("unexpected message %s", m.raw)
		}
	}
	if acked != sent {
		t.Errorf("acked %d bytes, sent %d", acked, sent)
	}
	if finals == 0 {
		t.Error("no final transcript")
	}
	if !slices.Contains(types, "transcript") || !slices.Contains(types, "speech_start") {
		t.Errorf("types %v", types)
	}
	// PROTOCOL.md order at stop.
	tail := []string{"stop_recording", "end_recording", "post_transcript", "post_final_transcript", "end_session"}
	pos := -1
	for _, want := range tail {
		j := slices.Index(types[pos+1:], want)
		if j < 0 {
			t.Fatalf("message order %v lacks %s after position %d", types, want, pos)
		}
		pos += 1 + j
	}
	if types[0] != "start_session" || types[len(types)-1] != "end_session" {
		t.Errorf("first %s last %s", types[0], types[len(types)-1])
	}
	for _, ty := range types[slices.Index(types, "end_recording"):] {
		if ty == "transcript" || ty == "audio_chunk" {
			t.Errorf("%s after end_recording", ty)
		}
	}
}

func TestLiveReconnect(t *testing.T) {
	d := startDaemon(t, "", "")
	key := createKey(t, d.DataDir, "acme")
	path, ref := clip(t, "ls-test-clean-1089-134686-0000.wav")
	audio := pcmOf(t, path)
	s := d.createLive(key, map[string]any{})

	// First connection: send 60%, read acks, then cut the TCP connection.
	c1, err := dial(t, s.URL)
	if err != nil {
		t.Fatal(err)
	}
	cut := len(audio) * 6 / 10
	step := 3200
	var lastAck int64
	for i := 0; i < cut; i += step {
		c1.WriteMessage(websocket.BinaryMessage, audio[i:min(i+step, cut)])
	}
	c1.SetReadDeadline(time.Now().Add(30 * time.Second))
	for lastAck < int64(cut)-int64(step)*3 {
		_, b, err := c1.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		var m liveMsg
		json.Unmarshal(b, &m)
		if m.Type == "audio_chunk" {
			var r struct {
				ByteRange [2]int64 `json:"byte_range"`
			}
			json.Unmarshal(m.Data, &r)
			lastAck = r.ByteRange[1]
		}
	}
	c1.UnderlyingConn().Close() // abrupt: no close frame

	// Reconnect with the same URL, resend everything after the last ack seen.
	c2, err := dial(t, s.URL)
	if err != nil {
		t.Fatalf("reconnect: %v", err)
	}
	defer c2.Close()
	done := make(chan struct{})
	var msgs []liveMsg
	var code int
	go func() {
		defer close(done)
		msgs, code = readAll(t, c2, 2*time.Minute)
	}()
	rest := audio[lastAck:]
	for i := 0; i < len(rest); i += step {
		c2.WriteMessage(websocket.BinaryMessage, rest[i:min(i+step, len(rest))])
	}
	c2.WriteJSON(map[string]any{"type": "stop_recording"})
	<-done
	if code != 1000 {
		t.Fatalf("close %d", code)
	}
	var first int64 = -1
	for _, m := range msgs {
		if m.Type == "audio_chunk" {
			var r struct {
				ByteRange [2]int64 `json:"byte_range"`
			}
			json.Unmarshal(m.Data, &r)
			if first < 0 {
				first = r.ByteRange[0]
			}
		}
	}
	if first != lastAck {
		t.Errorf("after reconnect the first ack starts at %d, want %d", first, lastAck)
	}
	var job map[string]any
	d.do("GET", "/v2/live/"+s.ID, key, nil, "", &job)
	tr := job["result"].(map[string]any)["transcription"].(map[string]any)
	wer := recognizertest.WER(ref, tr["full_transcript"].(string))
	t.Logf("WER after reconnect %.3f", wer)
	if wer > werLiveLS {
		t.Errorf("WER %.3f > %.3f: %s", wer, werLiveLS, tr["full_transcript"])
	}
	_, wav := d.do("GET", "/v2/live/"+s.ID+"/file", key, nil, "", nil)
	if !bytes.Equal(wav[44:], audio) {
		t.Errorf("stored audio: %d bytes, want %d identical to what was sent", len(wav)-44, len(audio))
	}
}

const liveLimits = `
live:
  max_frame_bytes: 4096
  token_ttl: 2s
`

func TestLiveBadInput(t *testing.T) {
	d := startDaemon(t, "", liveLimits)
	key := createKey(t, d.DataDir, "acme")
	path, _ := clip(t, "pocketsphinx-goforward.wav")
	audio := pcmOf(t, path)

	expectClose := func(t *testing.T, c *websocket.Conn, want int) []liveMsg {
		t.Helper()
		msgs, code := readAll(t, c, 30*time.Second)
		if code != want {
			t.Errorf("close code %d, want %d", code, want)
		}
		return msgs
	}
	t.Run("bad token", func(t *testing.T) {
		s := d.createLive(key, map[string]any{})
		for _, u := range []string{
			strings.Replace(s.URL, "token=", "token=x", 1),
			s.URL[:len(s.URL)-4] + "abcd",
			strings.Replace(s.URL, s.ID, "00000000-0000-4000-8000-000000000000", 1),
		} {
			c, err := dial(t, u)
			if err != nil {
				t.Fatal(err)
			}
			expectClose(t, c, 4401)
			c.Close()
		}
	})
	t.Run("expired token ends the session as 408", func(t *testing.T) {
		s := d.createLive(key, map[string]any{})
		d.WaitLog(time.Minute, `"live session failed"`, s.ID)
		c, err := dial(t, s.URL)
		if err != nil {
			t.Fatal(err)
		}
		expectClose(t, c, 4401)
		var job map[string]any
		d.do("GET", "/v2/live/"+s.ID, key, nil, "", &job)
		if job["status"] != "error" || job["error_code"] != 408.0 {
			t.Errorf("job %v %v", job["status"], job["error_code"])
		}
	})
	t.Run("frame too large, malformed JSON, unknown type", func(t *testing.T) {
		s := d.createLive(key, map[string]any{})
		for _, c := range []struct {
			send func(*websocket.Conn)
			want int
		}{
			{func(c *websocket.Conn) { c.WriteMessage(websocket.BinaryMessage, make([]byte, 8000)) }, 4413},
			{func(c *websocket.Conn) { c.WriteMessage(websocket.TextMessage, []byte(`{"type":`)) }, 4400},
			{func(c *websocket.Conn) { c.WriteMessage(websocket.TextMessage, []byte(`{"type":"dance"}`)) }, 4400},
			{func(c *websocket.Conn) {
				c.WriteMessage(websocket.TextMessage, []byte(`{"type":"audio_chunk","data":{"chunk":"%%%"}}`))
			}, 4400},
		} {
			conn, err := dial(t, s.URL)
			if err != nil {
				t.Fatal(err)
			}
			conn.WriteMessage(websocket.BinaryMessage, audio[:3200])
			c.send(conn)
			expectClose(t, conn, c.want)
			conn.Close()
		}
		// The session survived each bad connection: finish it properly.
		conn, err := dial(t, s.URL)
		if err != nil {
			t.Fatal(err)
		}
		conn.WriteMessage(websocket.BinaryMessage, audio[:3201]) // odd byte count
		conn.WriteJSON(map[string]any{"type": "stop_recording"})
		msgs := expectClose(t, conn, 1000)
		var sawTrailing bool
		for _, m := range msgs {
			if m.Type == "error" && strings.Contains(string(m.Error), "trailing") {
				sawTrailing = true
			}
		}
		if !sawTrailing {
			t.Error("no error message for the trailing odd byte")
		}
		_, wav := d.do("GET", "/v2/live/"+s.ID+"/file", key, nil, "", nil)
		// Every connection resent the same first 3200 bytes, as a client
		// resending from the start would: the session recognised the
		// resends and kept the audio once.
		if len(wav) != 44+3200 || !bytes.Equal(wav[44:], audio[:3200]) {
			t.Errorf("stored audio %d bytes, want 3200", len(wav)-44)
		}
		// Audio after the session ended: the socket is refused as ended.
		c2, err := dial(t, s.URL)
		if err != nil {
			t.Fatal(err)
		}
		expectClose(t, c2, 4404)
	})
	t.Run("model-3 is 422, bad fields 400, no key 401", func(t *testing.T) {
		var eb errBody
		status, _ := d.postJSON("/v2/live", key, map[string]any{"model": "model-3"}, &eb)
		checkError(t, status, eb, 422, "/v2/live model-3")
		status, _ = d.postJSON("/v2/live", key, map[string]any{"sample_rate": 12345}, &eb)
		checkError(t, status, eb, 400, "/v2/live sample_rate")
		if !strings.Contains(strings.Join(eb.ValidationErrors, " "), "sample_rate") {
			t.Errorf("validation_errors %q", eb.ValidationErrors)
		}
		var eb401 errBody
		status, _ = d.do("GET", "/v2/live", "", nil, "", &eb401)
		checkError(t, status, eb401, 401, "/v2/live without key")
	})
}
