package e2e

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
)

// ackRange is an audio_chunk ack's byte_range, or ok false for another
// message.
func ackRange(t *testing.T, m liveMsg) (r [2]int64, ok bool) {
	t.Helper()
	if m.Type != "audio_chunk" {
		return r, false
	}
	var d struct {
		ByteRange [2]int64 `json:"byte_range"`
	}
	if m.Acknowledged == nil || !*m.Acknowledged || string(m.Error) != "null" || json.Unmarshal(m.Data, &d) != nil {
		t.Fatalf("audio_chunk ack not acknowledged: %s", m.raw)
	}
	return d.ByteRange, true
}

// readMsg reads one server message, failing the test past the deadline.
func readMsg(t *testing.T, c *websocket.Conn, deadline time.Time) liveMsg {
	t.Helper()
	c.SetReadDeadline(deadline)
	_, b, err := c.ReadMessage()
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	var m liveMsg
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("message %q: %v", b, err)
	}
	m.raw = b
	return m
}

// TestLiveAcks sends a session's audio one frame at a time, as binary
// frames and as JSON audio_chunk messages, and waits for each frame's ack
// before the next (PROTOCOL.md, Acknowledgments): every frame gets exactly
// one ack, in order, whose byte_range starts where the previous one ended
// and ends at the whole samples received so far (an odd byte waits for
// its sample's other half, and the next ack covers it); the stop_recording
// ack follows the last one, and audio after it gets an unacknowledged
// audio_chunk error. A session with receive_acknowledgments false gets no
// ack, of audio or of stop_recording (PROTOCOL.md's table of switches). How long an ack takes is measured by bench/cmd/ackbench, not here
// (timing on a shared box is noise); this test only bounds each wait with
// a deadline far above PROTOCOL's 500 ms, for presence.
func TestLiveAcks(t *testing.T) {
	d := startDaemon(t, "", "")
	key := createKey(t, d.DataDir, "acme")
	path, _ := clip(t, "pocketsphinx-goforward.wav")
	audio := pcmOf(t, path)
	// Frame sizes: 20 ms, 100 ms, one sample, an odd byte count (its last
	// byte waits for the next frame) and the rest of that sample, then the
	// rest of the clip in 64 KiB frames.
	sizes := []int{640, 3200, 2, 641, 639}
	for n := 640 + 3200 + 2 + 641 + 639; n < len(audio); n += sizes[len(sizes)-1] {
		sizes = append(sizes, min(64<<10, len(audio)-n))
	}

	s := d.createLive(key, map[string]any{"messages_config": map[string]any{"receive_lifecycle_events": true}})
	c, err := dial(t, s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var sent, acked int64
	var waits []time.Duration
	for i, n := range sizes {
		frame := audio[sent : sent+int64(n)]
		t0 := time.Now()
		if i%2 == 0 {
			err = c.WriteMessage(websocket.BinaryMessage, frame)
		} else {
			err = c.WriteJSON(map[string]any{"type": "audio_chunk", "data": map[string]any{"chunk": base64.StdEncoding.EncodeToString(frame)}})
		}
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		sent += int64(n)
		deadline := t0.Add(30 * time.Second)
		for {
			m := readMsg(t, c, deadline)
			r, ok := ackRange(t, m)
			if !ok {
				continue // lifecycle events and transcripts interleave
			}
			waits = append(waits, time.Since(t0))
			if want := [2]int64{acked, sent &^ 1}; r != want {
				t.Fatalf("frame %d (%d bytes, %d sent): ack byte_range %v, want %v", i, n, sent, r, want)
			}
			acked = r[1]
			break
		}
	}
	if err := c.WriteJSON(map[string]any{"type": "stop_recording"}); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteMessage(websocket.BinaryMessage, audio[:640]); err != nil {
		t.Fatal(err)
	}
	var types []string
	refused := false
	deadline := time.Now().Add(2 * time.Minute)
	for !slices.Contains(types, "end_session") {
		m := readMsg(t, c, deadline)
		types = append(types, m.Type)
		switch {
		case m.Type == "audio_chunk" && m.Acknowledged != nil && !*m.Acknowledged && string(m.Error) != "null":
			refused = true
		case m.Type == "audio_chunk":
			t.Errorf("an ack after stop_recording: %s", m.raw)
		case m.Type == "stop_recording":
			if m.Acknowledged == nil || !*m.Acknowledged {
				t.Errorf("stop_recording not acknowledged: %s", m.raw)
			}
		}
	}
	if !refused {
		t.Errorf("audio after stop_recording: no unacknowledged audio_chunk error in %v", types)
	}
	if i := slices.Index(types, "stop_recording"); i < 0 || i > slices.Index(types, "end_recording") {
		t.Errorf("message order after the last ack %v: want stop_recording before end_recording", types)
	}
	slices.Sort(waits)
	t.Logf("%d frames, %d acks; wait for an ack (loaded box, not a bound) p50 %v max %v", len(sizes), len(waits), waits[len(waits)/2], waits[len(waits)-1])

	t.Run("receive_acknowledgments false", func(t *testing.T) {
		s := d.createLive(key, map[string]any{"messages_config": map[string]any{"receive_acknowledgments": false}})
		msgs, code := runSession(t, s.URL, audio, 32, 0)
		if code != 1000 {
			t.Fatalf("close code %d", code)
		}
		for _, m := range msgs {
			if m.Type == "audio_chunk" || m.Type == "stop_recording" {
				t.Fatalf("an ack with receive_acknowledgments false: %s", m.raw)
			}
		}
		if !slices.ContainsFunc(msgs, func(m liveMsg) bool { return m.Type == "transcript" }) {
			t.Errorf("no transcript in %d messages", len(msgs))
		}
	})
}
