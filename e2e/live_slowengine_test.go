package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
)

// slowStandin is a remote engine that speaks POST /v1/audio/transcriptions
// (the OpenAI-compatible protocol the remote engine uses, as
// transcriptionStandin) but holds every answer for 5 s, or until released.
// arrived is closed by the first request; answered is set just before the
// first answer is written.
type slowStandin struct {
	inner    *transcriptionStandin
	arrived  chan struct{}
	once     sync.Once
	release  chan struct{}
	answered atomic.Bool
}

func (s *slowStandin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.once.Do(func() { close(s.arrived) })
	select {
	case <-s.release:
	case <-time.After(5 * time.Second):
	case <-r.Context().Done():
		return
	}
	s.answered.Store(true)
	s.inner.ServeHTTP(w, r)
}

// TestLiveAcksWhileRemoteEngineWaits: a live session on a remote engine
// whose server takes 5 s per utterance keeps acknowledging the audio it
// receives while the engine's request is pending: the session stores and
// acks audio on its own goroutine, and the recogniser catches up behind it.
// Audio sent after the engine's first request arrived must be acked before
// the engine answers.
func TestLiveAcksWhileRemoteEngineWaits(t *testing.T) {
	inner := &transcriptionStandin{t: t}
	inner.mode.Store("ok")
	sv := &slowStandin{inner: inner, arrived: make(chan struct{}), release: make(chan struct{})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: sv}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(sv.release) }) }
	t.Cleanup(release)
	cfg := fmt.Sprintf(`engines:
  remote:
    - name: gpu
      url: http://%s/v1
      model: whisper-test
      languages: [en]
      timeout: 30s
      retries: -1
  fallback: false
live:
  batch_pass: false
`, ln.Addr())
	d := startDaemon(t, "", cfg)
	key := createKey(t, d.DataDir, "acme")
	path, _ := clip(t, "ls-test-clean-1089-134686-0000.wav")
	audio := pcmOf(t, path)

	s := d.createLive(key, map[string]any{"language_config": map[string]any{"languages": []string{"en"}},
		"messages_config": map[string]any{"receive_acknowledgments": true}})
	conn, err := dial(t, s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// The reader passes on every message until the socket closes.
	msgs := make(chan liveMsg, 4096)
	closed := make(chan int, 1)
	go func() {
		defer close(msgs)
		conn.SetReadDeadline(time.Now().Add(2 * time.Minute))
		for {
			_, b, err := conn.ReadMessage()
			if err != nil {
				code := 0
				var ce *websocket.CloseError
				if errors.As(err, &ce) {
					code = ce.Code
				}
				closed <- code
				return
			}
			var m liveMsg
			json.Unmarshal(b, &m)
			m.raw = b
			msgs <- m
		}
	}()
	ackedTo := func(m liveMsg) int64 {
		var d struct {
			ByteRange []int64 `json:"byte_range"`
		}
		if m.Type != "audio_chunk" || m.Acknowledged == nil || !*m.Acknowledged || json.Unmarshal(m.Data, &d) != nil || len(d.ByteRange) != 2 {
			return -1
		}
		return d.ByteRange[1]
	}

	// Speech in 100 ms frames, as fast as the socket takes it, until the
	// first utterance's request reaches the engine.
	const step = 3200
	sent := 0
	send := func() {
		t.Helper()
		if sent >= len(audio) {
			t.Fatalf("all %d bytes sent and the engine got no request", len(audio))
		}
		chunk := audio[sent:min(sent+step, len(audio))]
		if err := conn.WriteMessage(websocket.BinaryMessage, chunk); err != nil {
			t.Fatalf("send: %v", err)
		}
		sent += len(chunk)
	}
	var acked int64
	for waiting := true; waiting; {
		select {
		case <-sv.arrived:
			waiting = false
		default:
			send()
			// Keep the client's view of the acks current without waiting.
			for drained := false; !drained; {
				select {
				case m, ok := <-msgs:
					if !ok {
						t.Fatalf("socket closed (%d) before the engine got a request", <-closed)
					}
					acked = max(acked, ackedTo(m))
				default:
					drained = true
				}
			}
			time.Sleep(10 * time.Millisecond) // the sender's pace: 100 ms of audio per 10 ms
		}
	}
	// The engine holds its answer: send one more second and wait for its
	// acks.
	for range 10 {
		if sent < len(audio) {
			send()
		}
	}
	target := int64(sent)
	deadline := time.After(20 * time.Second)
	for acked < target {
		select {
		case m, ok := <-msgs:
			if !ok {
				t.Fatalf("socket closed (%d) with audio acked to %d of %d", <-closed, acked, target)
			}
			acked = max(acked, ackedTo(m))
		case <-deadline:
			t.Fatalf("audio acked to %d of %d after 20 s", acked, target)
		}
	}
	if sv.answered.Load() {
		t.Fatalf("the acks of audio sent while the remote engine's request was pending came only after it answered (5 s): the session waited for the engine")
	}
	// The engine answers now; the session ends normally with its words.
	release()
	if err := conn.WriteJSON(map[string]any{"type": "stop_recording"}); err != nil {
		t.Fatal(err)
	}
	var finals int
	for m := range msgs {
		if m.Type == "post_final_transcript" {
			finals++
		}
	}
	if code := <-closed; code != 1000 || finals != 1 {
		t.Fatalf("close %d, %d post_final_transcript", code, finals)
	}
	var job map[string]any
	d.do("GET", "/v2/live/"+s.ID, key, nil, "", &job)
	res, _ := job["result"].(map[string]any)
	tr, _ := res["transcription"].(map[string]any)
	if job["status"] != "done" || tr == nil || tr["full_transcript"] == "" {
		t.Fatalf("job %v: transcription %v", job["status"], tr)
	}
}
