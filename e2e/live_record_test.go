package e2e

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fasthttp/websocket"

	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// sessionEndBound bounds the time from stop_recording to the socket's
// close after end_session. The end does not wait for the batch pass: it is
// the flush of the utterance in progress and the post-processing add-ons,
// whatever the call's length. Generous for a loaded 2-core CI box; what
// the test really checks is that the session's own post_final_transcript
// is the live one, so the end did not wait for the pass.
const sessionEndBound = 10 * time.Second

// batchPassWait bounds the wait for the batch pass of one session of up
// to half a minute: a pass runs niced, behind live audio, on one worker
// (on a loaded 2-core box one of 11.7 s took 27.9 s, TestConsoleBrowser in
// CI, 2026-11-30).
const batchPassWait = 3 * time.Minute

// TestLiveRecordMatchesPreRecorded: the live finals of each session are
// bounded against the pre-recorded job on the same audio (checkLiveGap:
// TestLiveFinalsMatchBatch's bounds, measured there on the same clips,
// renditions and daemon, the telephone model for 8 kHz; the two tests
// sent the same sessions until 2026-11-30). The stored record of a live session
// (GET /v2/live/{id} and the callback's post_final_transcript) is what a
// pre-recorded job gives on the session's own recording: the same engine
// and options on the same audio, so the same transcript, word for word,
// unless the record took stretches of the live finals the engine scores
// higher (post_session_metadata.record_stretches.live, issue 41's
// combined record); its WER is never more than 0.5 points above the
// pre-recorded job's (before issue 41 within 0.5 points either way: the
// record was the batch pass's words). The session itself still
// ends promptly with its live result, and post_session_metadata says which
// pass produced the stored result. Before the batch pass the stored result
// was the live finals (WER measured 2026-11-24: see the log lines).
func TestLiveRecordMatchesPreRecorded(t *testing.T) {
	recv := &callbackReceiver{hit: make(chan struct{}, 1)}
	srv := &http.Server{Handler: recv}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	hook := "http://" + ln.Addr().String() + "/hook"

	d := startDaemon(t, "", telephoneModel(t)+fastRetries)
	key := createKey(t, d.DataDir, "acme")
	for _, r := range []struct {
		name       string
		body       map[string]any
		bytesPerMs int
		audio      func(path string) []byte
	}{
		{"pcm16k", map[string]any{}, 32, func(p string) []byte { return pcmOf(t, p) }},
		{"mulaw8k", map[string]any{"encoding": "wav/ulaw", "sample_rate": 8000, "bit_depth": 8}, 8, func(p string) []byte { return ulawOf(t, p) }},
	} {
		t.Run(r.name, func(t *testing.T) {
			var storedErrs, batchErrs, liveErrs, words int
			for _, f := range accuracyClips {
				path, ref := clip(t, f)
				body := map[string]any{
					"messages_config": map[string]any{"receive_lifecycle_events": true},
					"callback":        true, "callback_config": map[string]any{"url": hook, "receive_final_transcripts": false},
				}
				for k, v := range r.body {
					body[k] = v
				}
				s := d.createLive(key, body)
				conn, err := dial(t, s.URL)
				if err != nil {
					t.Fatal(err)
				}
				// The audio goes as fast as it can; stop_recording is sent
				// once every byte is acknowledged (taken in, with the
				// embedded recogniser at most a second behind it), as at the
				// end of a call streamed in real time.
				audio := r.audio(path)
				done, acked := make(chan struct{}), make(chan struct{})
				var msgs []liveMsg
				var code int
				go func() {
					defer close(done)
					conn.SetReadDeadline(time.Now().Add(3 * time.Minute))
					for {
						_, b, err := conn.ReadMessage()
						if err != nil {
							code = websocket.CloseAbnormalClosure
							if ce, ok := err.(*websocket.CloseError); ok {
								code = ce.Code
							}
							return
						}
						var m liveMsg
						if json.Unmarshal(b, &m) != nil {
							continue
						}
						msgs = append(msgs, m)
						var ack struct {
							ByteRange []int64 `json:"byte_range"`
						}
						if m.Type == "audio_chunk" && json.Unmarshal(m.Data, &ack) == nil && len(ack.ByteRange) == 2 && ack.ByteRange[1] == int64(len(audio)) {
							close(acked)
						}
					}
				}()
				stream(t, conn, audio, r.bytesPerMs, 100, 0)
				select {
				case <-acked:
				case <-done:
					t.Fatalf("%s: closed before every byte was acknowledged", f)
				}
				stopped := time.Now()
				conn.WriteJSON(map[string]any{"type": "stop_recording"})
				select {
				case <-done:
				case <-time.After(sessionEndBound):
					t.Fatalf("%s: session not ended %s after stop_recording", f, sessionEndBound)
				}
				ended := time.Since(stopped)
				conn.Close()
				if code != 1000 || len(msgs) == 0 || msgs[len(msgs)-1].Type != "end_session" {
					t.Fatalf("%s: close %d, %d messages", f, code, len(msgs))
				}

				// The session's own post_final_transcript is its live
				// finals: the end did not wait for the batch pass.
				var finals []string
				var wsFinal struct {
					Transcription struct{ Utterances []struct{ Text string } }
				}
				for _, m := range msgs {
					var tr struct {
						IsFinal   bool `json:"is_final"`
						Utterance struct{ Text string }
					}
					switch {
					case m.Type == "transcript" && json.Unmarshal(m.Data, &tr) == nil && tr.IsFinal:
						finals = append(finals, tr.Utterance.Text)
					case m.Type == "post_final_transcript":
						if err := json.Unmarshal(m.Data, &wsFinal); err != nil {
							t.Fatal(err)
						}
					}
				}
				var wsTexts []string
				for _, u := range wsFinal.Transcription.Utterances {
					wsTexts = append(wsTexts, u.Text)
				}
				if strings.Join(wsTexts, "|") != strings.Join(finals, "|") {
					t.Errorf("%s: the WebSocket's post_final_transcript %q is not the live finals %q", f, wsTexts, finals)
				}

				// Right after the end the record is done, with a result.
				var rec map[string]any
				if status, b := d.do("GET", "/v2/live/"+s.ID, key, nil, "", &rec); status != 200 || rec["status"] != "done" || rec["result"] == nil {
					t.Fatalf("%s: GET right after the end: %d %.300s", f, status, b)
				}
				md := rec["post_session_metadata"].(map[string]any)
				if p, bp := md["transcription_pass"], md["batch_pass"]; !(p == "live" && bp == "pending" || p == "batch" && bp == "done") {
					t.Errorf("%s: right after the end transcription_pass %v, batch_pass %v", f, p, bp)
				}

				// Then the batch pass replaces it.
				deadline := time.Now().Add(batchPassWait)
				for md["transcription_pass"] != "batch" {
					if md["batch_pass"] != "pending" || time.Now().After(deadline) {
						t.Fatalf("%s: no batch pass result: transcription_pass %v, batch_pass %v (%v), %s after the end", f, md["transcription_pass"], md["batch_pass"], md["batch_pass_error"], time.Since(stopped).Round(time.Millisecond))
					}
					time.Sleep(50 * time.Millisecond) // polling a condition with a deadline
					d.do("GET", "/v2/live/"+s.ID, key, nil, "", &rec)
					md = rec["post_session_metadata"].(map[string]any)
				}
				if md["batch_pass"] != "done" {
					t.Errorf("%s: batch_pass %v", f, md["batch_pass"])
				}
				res := rec["result"].(map[string]any)
				stored := res["transcription"].(map[string]any)["full_transcript"].(string)
				if n := len(res["messages"].([]any)); n != len(msgs) {
					t.Errorf("%s: result.messages has %d messages, the session sent %d", f, n, len(msgs))
				}

				// A pre-recorded job on the session's own recording.
				status, wav := d.do("GET", "/v2/live/"+s.ID+"/file", key, nil, "", nil)
				if status != 200 {
					t.Fatalf("%s: recording: %d", f, status)
				}
				rp := filepath.Join(t.TempDir(), f)
				if err := os.WriteFile(rp, wav, 0o600); err != nil {
					t.Fatal(err)
				}
				job := submit(t, d, key, rp, func(url string) map[string]any { return map[string]any{"audio_url": url} })
				batch := job["result"].(map[string]any)["transcription"].(map[string]any)["full_transcript"].(string)
				fromLive := 0.0
				if rs, ok := md["record_stretches"].(map[string]any); ok {
					fromLive, _ = rs["live"].(float64)
				}
				if stored != batch && fromLive == 0 {
					t.Errorf("%s: stored live result %q, pre-recorded job on its recording %q, no stretch from the live finals", f, stored, batch)
				}

				// The callback gets one final record: the batch pass's.
				var finalsSeen, ends int
				var cbFinal string
				for ends == 0 {
					hits := recv.wait(t, 1, batchPassWait)
					finalsSeen, ends, cbFinal = 0, 0, ""
					for _, h := range hits {
						var cb struct {
							ID      string
							Event   string
							Payload struct {
								Data struct {
									Transcription struct {
										FullTranscript string `json:"full_transcript"`
									}
								}
							}
						}
						if json.Unmarshal(h.body, &cb) != nil || cb.ID != s.ID {
							continue
						}
						switch cb.Event {
						case "live.post_final_transcript":
							finalsSeen++
							cbFinal = cb.Payload.Data.Transcription.FullTranscript
						case "live.end_session":
							ends++
						}
					}
					if ends == 0 {
						select {
						case <-recv.hit:
						case <-time.After(batchPassWait):
							t.Fatalf("%s: no live.end_session callback", f)
						}
					}
				}
				if finalsSeen != 1 || ends != 1 || cbFinal != stored {
					t.Errorf("%s: callback: %d post_final_transcript (%q), %d end_session; want one of each, with the stored %q", f, finalsSeen, cbFinal, ends, stored)
				}

				rw := recognizertest.Normalize(ref)
				se := recognizertest.EditDistance(rw, recognizertest.Normalize(stored))
				be := recognizertest.EditDistance(rw, recognizertest.Normalize(batch))
				le := recognizertest.EditDistance(rw, recognizertest.Normalize(strings.Join(finals, " ")))
				t.Logf("%s: session ended %s after stop_recording; batch pass %vs; errors: stored %d, pre-recorded %d, live finals %d (%d words); record stretches %v",
					f, ended.Round(time.Millisecond), md["batch_pass_seconds"], se, be, le, len(rw), md["record_stretches"])
				storedErrs, batchErrs, liveErrs, words = storedErrs+se, batchErrs+be, liveErrs+le, words+len(rw)
			}
			ws, wb, wl := 100*float64(storedErrs)/float64(words), 100*float64(batchErrs)/float64(words), 100*float64(liveErrs)/float64(words)
			t.Logf("%s: WER stored record %.2f%%, pre-recorded %.2f%%, live finals %.2f%% (%d words)", r.name, ws, wb, wl, words)
			if ws-wb > 0.5 {
				t.Errorf("stored record's WER %.2f%% is more than 0.5 points above the pre-recorded job's %.2f%%", ws, wb)
			}
			checkLiveGap(t, r.name, wl, wb)
		})
	}
}

// TestLiveBatchPassBelowLive: a batch pass waits while the live sessions
// could need every decoder (the harness's two; a two-channel session
// created and not connected keeps both reserved), without holding the
// only worker from a pre-recorded job; it survives a SIGKILL and restart
// while it waits, and runs once that session is gone.
func TestLiveBatchPassBelowLive(t *testing.T) {
	const cfg = "workers: 1\nlive:\n  connect_timeout: 10m\n"
	d := startDaemon(t, "", cfg)
	key := createKey(t, d.DataDir, "acme")
	path, _ := clip(t, "ls-test-clean-1089-134686-0000.wav")
	blocker := d.createLive(key, map[string]any{"channels": 2})
	s := d.createLive(key, map[string]any{})
	if _, code := runSession(t, s.URL, pcmOf(t, path), 32, 0); code != 1000 {
		t.Fatalf("close code %d", code)
	}
	pending := func(d *daemonProc, when string) {
		t.Helper()
		var rec map[string]any
		if status, b := d.do("GET", "/v2/live/"+s.ID, key, nil, "", &rec); status != 200 || rec["status"] != "done" || rec["result"] == nil {
			t.Fatalf("%s: %d %.300s", when, status, b)
		}
		md := rec["post_session_metadata"].(map[string]any)
		if md["transcription_pass"] != "live" || md["batch_pass"] != "pending" {
			t.Fatalf("%s: transcription_pass %v, batch_pass %v; want live, pending (a live session could need every decoder)", when, md["transcription_pass"], md["batch_pass"])
		}
	}
	pending(d, "after the end")
	d.Kill()
	d = startDaemon(t, d.DataDir, cfg)
	pending(d, "after a SIGKILL and restart")
	// The only worker runs a pre-recorded job meanwhile (a pass it had
	// taken would have run first), and the pass still waits.
	short, _ := clip(t, "pocketsphinx-goforward.wav")
	submit(t, d, key, short, func(url string) map[string]any { return map[string]any{"audio_url": url} })
	pending(d, "after a pre-recorded job ran")
	if status, _ := d.do("DELETE", "/v2/live/"+blocker.ID, key, nil, "", nil); status != 202 {
		t.Fatalf("DELETE the blocking session: %d", status)
	}
	deadline := time.Now().Add(batchPassWait)
	for {
		var rec map[string]any
		d.do("GET", "/v2/live/"+s.ID, key, nil, "", &rec)
		md := rec["post_session_metadata"].(map[string]any)
		if md["transcription_pass"] == "batch" && md["batch_pass"] == "done" {
			break
		}
		if md["batch_pass"] != "pending" || time.Now().After(deadline) {
			t.Fatalf("after the blocking session ended: transcription_pass %v, batch_pass %v (%v)", md["transcription_pass"], md["batch_pass"], md["batch_pass_error"])
		}
		time.Sleep(50 * time.Millisecond) // polling a condition with a deadline
	}
}

// TestLiveBatchPassOff: with live.batch_pass false the live result is the
// record, said so, and the callback's final messages go at once.
func TestLiveBatchPassOff(t *testing.T) {
	recv := &callbackReceiver{hit: make(chan struct{}, 1)}
	srv := &http.Server{Handler: recv}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	d := startDaemon(t, "", "live:\n  batch_pass: false\n")
	key := createKey(t, d.DataDir, "acme")
	path, _ := clip(t, "pocketsphinx-goforward.wav")
	s := d.createLive(key, map[string]any{"callback": true, "callback_config": map[string]any{"url": "http://" + ln.Addr().String() + "/hook"}})
	if _, code := runSession(t, s.URL, pcmOf(t, path), 32, 0); code != 1000 {
		t.Fatalf("close code %d", code)
	}
	var rec map[string]any
	if status, b := d.do("GET", "/v2/live/"+s.ID, key, nil, "", &rec); status != 200 || rec["status"] != "done" {
		t.Fatalf("GET: %d %.300s", status, b)
	}
	md := rec["post_session_metadata"].(map[string]any)
	if md["transcription_pass"] != "live" || md["batch_pass"] != "off" {
		t.Errorf("transcription_pass %v, batch_pass %v; want live, off", md["transcription_pass"], md["batch_pass"])
	}
	stored := rec["result"].(map[string]any)["transcription"].(map[string]any)["full_transcript"]
	for {
		for _, h := range recv.wait(t, 1, time.Minute) {
			var cb struct {
				Event   string
				Payload struct {
					Data struct {
						Transcription struct {
							FullTranscript string `json:"full_transcript"`
						}
					}
				}
			}
			if json.Unmarshal(h.body, &cb) == nil && cb.Event == "live.post_final_transcript" {
				if cb.Payload.Data.Transcription.FullTranscript != stored {
					t.Errorf("callback's post_final_transcript %q, stored %q", cb.Payload.Data.Transcription.FullTranscript, stored)
				}
				return
			}
		}
		select {
		case <-recv.hit:
		case <-time.After(time.Minute):
			t.Fatal("no live.post_final_transcript callback")
		}
	}
}
