package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// liveFinal is a final transcript's utterance as a live session sends it.
type liveFinal struct {
	Start, End float64
	Text       string
	Language   string
	Words      []struct {
		Word       string
		Start, End float64
	}
}

// liveView sorts a live session's messages for the engine tests.
type liveView struct {
	finals, partials []liveFinal
	speechStarts     []float64 // speech_start times
	finalAfter       []float64 // per final, the time of the last speech_start before it
	errors           []string  // error messages' text
	ended            bool      // end_session came
}

func viewLive(t *testing.T, msgs []liveMsg) liveView {
	t.Helper()
	var v liveView
	for _, m := range msgs {
		switch m.Type {
		case "speech_start":
			var d struct{ Time float64 }
			json.Unmarshal(m.Data, &d)
			v.speechStarts = append(v.speechStarts, d.Time)
		case "transcript":
			var d struct {
				IsFinal   bool      `json:"is_final"`
				Utterance liveFinal `json:"utterance"`
			}
			if err := json.Unmarshal(m.Data, &d); err != nil {
				t.Fatalf("transcript %s: %v", m.raw, err)
			}
			if d.IsFinal {
				v.finals = append(v.finals, d.Utterance)
				last := -1.0
				if n := len(v.speechStarts); n > 0 {
					last = v.speechStarts[n-1]
				}
				v.finalAfter = append(v.finalAfter, last)
			} else {
				v.partials = append(v.partials, d.Utterance)
			}
		case "error":
			var e struct{ Message string }
			json.Unmarshal(m.Error, &e)
			v.errors = append(v.errors, e.Message)
		case "end_session":
			v.ended = true
		}
	}
	return v
}

// metricValue reads one series from GET /metrics; false when absent.
func metricValue(t *testing.T, d *daemonProc, series string) (float64, bool) {
	t.Helper()
	status, body := d.do("GET", "/metrics", "", nil, "", nil)
	if status != 200 {
		t.Fatalf("GET /metrics: %d", status)
	}
	for line := range strings.SplitSeq(string(body), "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			var v float64
			fmt.Sscan(rest, &v)
			return v, true
		}
	}
	return 0, false
}

// TestRemoteEngineLive: a live session routed to the remote engine sends
// the stand-in one request per utterance the endpointer closed (16 kHz
// mono WAV, the session's language), and its finals carry the server's
// words at the session's offsets; with partials asked for, partial
// requests run at the engine's partial_interval at most. /metrics counts
// the requests.
func TestRemoteEngineLive(t *testing.T) {
	sv, url := startStandin(t)
	const partialEvery = 300 * time.Millisecond
	// The requests counted are the live path's: no batch pass after the
	// sessions (it would send their recordings to the engine again).
	d := startDaemon(t, "", engineConfigWith(url, false, "      partial_interval: 300ms\n")+"live:\n  batch_pass: false\n")
	key := createKey(t, d.DataDir, "acme")
	path, _ := clip(t, "ls-test-clean-1089-134686-0000.wav")
	audio := pcmOf(t, path)
	audioSecs := float64(len(audio)) / 32000

	// Finals only, streamed as fast as possible.
	s := d.createLive(key, map[string]any{"language_config": map[string]any{"languages": []string{"en"}},
		"messages_config": map[string]any{"receive_speech_events": true, "receive_lifecycle_events": true}})
	msgs, code := runSession(t, s.URL, audio, 32, 0)
	v := viewLive(t, msgs)
	if code != 1000 || !v.ended || len(v.errors) > 0 {
		t.Fatalf("close %d, end_session %v, errors %q", code, v.ended, v.errors)
	}
	reqs := sv.requests()
	if len(v.finals) < 2 || len(reqs) != len(v.finals) {
		t.Fatalf("%d requests for %d finals (%d speech starts): want one request per utterance, several utterances",
			len(reqs), len(v.finals), len(v.speechStarts))
	}
	prevEnd := 0.0
	for i, f := range reqs {
		if f["_path"] != "/v1/audio/transcriptions" || f["model"] != "whisper-test" || f["language"] != "en" ||
			f["response_format"] != "verbose_json" || f["timestamp_granularities[]"] != "word,segment" || f["prompt"] != "" {
			t.Errorf("request %d fields %v", i, f)
		}
		u := v.finals[i]
		if u.Text != "alpha beta" || u.Language != "en" || len(u.Words) != 2 {
			t.Fatalf("final %d: %+v", i, u)
		}
		// The server's word times (0.10, 0.50 in the utterance's audio,
		// clamped to its length) plus where that audio starts in the
		// session: at most the 300 ms pre-roll before the utterance's
		// speech start, or where the previous utterance was cut.
		var secs float64
		fmt.Sscan(f["_seconds"], &secs)
		off := u.Words[0].Start - min(0.10, secs)
		cutHere := math.Abs(off-prevEnd) < 0.002
		if math.Abs(u.Words[1].Start-min(0.50, secs)-off) > 0.002 || off < -0.001 || off+secs > audioSecs+0.011 ||
			!cutHere && (off < v.finalAfter[i]-0.311 || off > v.finalAfter[i]+0.001) {
			t.Errorf("final %d: words %+v not at the server's times shifted by its audio's start (speech started at %.3f, audio %.3fs)",
				i, u.Words, v.finalAfter[i], secs)
		}
		prevEnd = off + secs
	}
	var job map[string]any
	d.do("GET", "/v2/live/"+s.ID, key, nil, "", &job)
	if psm, _ := job["post_session_metadata"].(map[string]any); job["status"] != "done" || psm["engine"] != "gpu" {
		t.Errorf("job %v %v", job["status"], job["post_session_metadata"])
	}
	seen, finalReqs := len(reqs), len(reqs) // stand-in requests so far; of which finals

	// Partials, streamed in real time: the growing utterance is re-sent
	// at most every partial_interval per utterance.
	short, _ := clip(t, "ls-test-clean-1089-134691-0001.wav")
	audio = pcmOf(t, short)
	s = d.createLive(key, map[string]any{"language_config": map[string]any{"languages": []string{"en"}},
		"messages_config": map[string]any{"receive_partial_transcripts": true}})
	began := time.Now()
	msgs, code = runSession(t, s.URL, audio, 32, 100*time.Millisecond)
	wall := time.Since(began)
	v = viewLive(t, msgs)
	reqs = sv.requests()[seen:]
	partialReqs := len(reqs) - len(v.finals)
	if code != 1000 || len(v.finals) == 0 || len(v.partials) == 0 {
		t.Fatalf("close %d, %d finals, %d partials", code, len(v.finals), len(v.partials))
	}
	if bound := int(wall/partialEvery) + len(v.finals) + 1; partialReqs < 1 || partialReqs > bound {
		t.Errorf("%d partial requests in %v for %d utterances, want 1..%d", partialReqs, wall, len(v.finals), bound)
	}
	// Partial messages come on the recogniser's 250 ms audio cadence.
	if bound := int(float64(len(audio))/32000/0.25) + len(v.finals); len(v.partials) > bound {
		t.Errorf("%d partial messages for %.1fs of audio, want at most %d", len(v.partials), float64(len(audio))/32000, bound)
	}
	for _, p := range v.partials {
		if p.Text != "alpha beta" || len(p.Words) != 2 || p.Words[0].Start < 0.1 || p.Words[1].End > float64(len(audio))/32000+0.001 {
			t.Errorf("partial %+v: want the server's words at session offsets", p)
		}
	}

	seen, finalReqs = seen+len(reqs), finalReqs+len(v.finals)

	// Narrowband (8 kHz, one-pass finals): each utterance is sent once,
	// when it ends, resampled to 16 kHz.
	narrow := filepath.Join(t.TempDir(), "speech.s16")
	if out, err := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-i", path, "-ar", "8000", "-ac", "1", "-f", "s16le", narrow).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v %s", err, out)
	}
	audio, _ = os.ReadFile(narrow)
	s = d.createLive(key, map[string]any{"language_config": map[string]any{"languages": []string{"en"}}, "sample_rate": 8000})
	msgs, code = runSession(t, s.URL, audio, 16, 0)
	v = viewLive(t, msgs)
	reqs = sv.requests()[seen:]
	if code != 1000 || len(v.finals) == 0 || len(reqs) != len(v.finals) || len(v.errors) > 0 {
		t.Fatalf("8 kHz: close %d, %d requests for %d finals, errors %q", code, len(reqs), len(v.finals), v.errors)
	}
	for i, u := range v.finals {
		if u.Text != "alpha beta" || u.Words[0].Start < 0 || u.Words[1].End > float64(len(audio))/16000+0.011 {
			t.Errorf("8 kHz final %d: %+v", i, u)
		}
	}

	// Metrics: every final request counted as ok, timed, breaker closed.
	finalsTotal := float64(finalReqs + len(v.finals))
	for series, want := range map[string]float64{
		`earshot_remote_requests_total{action="transcribe",engine="gpu",outcome="ok"}`: finalsTotal,
		`earshot_remote_request_seconds_count{action="transcribe",engine="gpu"}`:       finalsTotal,
		`earshot_remote_breaker_state{engine="gpu",state="closed"}`:                    1,
		`earshot_remote_breaker_state{engine="gpu",state="open"}`:                      0,
	} {
		if got, ok := metricValue(t, d, series); !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", series, got, ok, want)
		}
	}
	if got, _ := metricValue(t, d, `earshot_remote_requests_total{action="partial",engine="gpu",outcome="ok"}`); got < 1 {
		t.Errorf("no partial request counted ok")
	}
}

// TestRemoteEngineLiveFallback: the remote engine fails at the first
// utterance of a live session in English with fallback on: that utterance
// and the rest are transcribed by sphinx, the client gets one error
// message saying so, post_session_metadata names sphinx and the fallback,
// and /metrics shows the open breaker and the fallback.
func TestRemoteEngineLiveFallback(t *testing.T) {
	sv, url := startStandin(t)
	sv.mode.Store("fail")
	cfg := strings.Replace(engineConfig(url, true), "breaker_failures: 100", "breaker_failures: 1\n      breaker_cooldown: 10m", 1)
	d := startDaemon(t, "", cfg)
	key := createKey(t, d.DataDir, "acme")
	path, _ := clip(t, "pocketsphinx-goforward.wav")
	s := d.createLive(key, map[string]any{"language_config": map[string]any{"languages": []string{"en"}},
		"messages_config": map[string]any{"receive_lifecycle_events": true}})
	msgs, code := runSession(t, s.URL, pcmOf(t, path), 32, 0)
	v := viewLive(t, msgs)
	if code != 1000 || !v.ended {
		t.Fatalf("close %d, end_session %v", code, v.ended)
	}
	if len(v.errors) != 1 || !strings.Contains(v.errors[0], "transcription engine gpu unavailable; the session continues on engine sphinx") {
		t.Errorf("error messages %q, want one saying the session moved to sphinx", v.errors)
	}
	text := ""
	for _, f := range v.finals {
		text += " " + f.Text
	}
	if !strings.Contains(text, "forward") || strings.Contains(text, "alpha") {
		t.Errorf("finals %q: want sphinx's transcript", text)
	}
	if n := len(sv.requests()); n != 1 {
		t.Errorf("%d requests reached the stand-in, want 1 (then sphinx only)", n)
	}
	var job map[string]any
	d.do("GET", "/v2/live/"+s.ID, key, nil, "", &job)
	psm, _ := job["post_session_metadata"].(map[string]any)
	fb, _ := psm["fallback"].(map[string]any)
	if job["status"] != "done" || psm["engine"] != "sphinx" || fb["from"] != "gpu" || !strings.Contains(fmt.Sprint(fb["reason"]), "unavailable") {
		t.Errorf("job %v, post_session_metadata %v", job["status"], psm)
	}
	for series, want := range map[string]float64{
		`earshot_remote_breaker_state{engine="gpu",state="open"}`:                               1,
		`earshot_engine_fallbacks_total{engine="gpu",kind="live"}`:                              1,
		`earshot_remote_requests_total{action="transcribe",engine="gpu",outcome="unavailable"}`: 1,
	} {
		if got, ok := metricValue(t, d, series); !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", series, got, ok, want)
		}
	}
}

// TestRemoteEngineFaults: the server slow (past the engine's timeout),
// failing with 500, answering malformed JSON, or down: a pre-recorded job
// ends in the documented error, a live session gets the documented error
// message per utterance and still ends (end_session, close 1000, job
// done with the losses in post_session_metadata). Nothing stays stuck.
func TestRemoteEngineFaults(t *testing.T) {
	sv, url := startStandin(t)
	d := startDaemon(t, "", strings.Replace(engineConfig(url, false), "timeout: 5s", "timeout: 1s", 1))
	key := createKey(t, d.DataDir, "acme")
	path, _ := clip(t, "pocketsphinx-goforward.wav")
	status, up, body := d.upload(key, path)
	if status != 200 {
		t.Fatalf("upload %d %s", status, body)
	}
	audio := pcmOf(t, path)
	en := map[string]any{"languages": []string{"en"}}
	for _, tc := range []struct {
		mode, code, msg, outcome string
	}{
		{"slow", "503", "transcription engine gpu unavailable", "timeout"},
		{"fail", "503", "transcription engine gpu unavailable", "unavailable"},
		{"garbage", "500", "transcription engine gpu returned a bad response", "bad_response"},
		{"down", "503", "transcription engine gpu unavailable", "unavailable"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			if tc.mode == "down" {
				sv.down()
			} else {
				sv.mode.Store(tc.mode)
			}
			var created struct{ ID string }
			if status, body := d.postJSON("/v2/pre-recorded", key, map[string]any{"audio_url": up.AudioURL, "language_config": en}, &created); status != 201 {
				t.Fatalf("create: %d %s", status, body)
			}
			rec := d.waitJob(key, created.ID, time.Minute)
			if rec["status"] != "error" || fmt.Sprint(rec["error_code"]) != tc.code || !strings.Contains(fmt.Sprint(rec["post_session_metadata"]), tc.msg) {
				t.Errorf("job: status %v code %v metadata %v", rec["status"], rec["error_code"], rec["post_session_metadata"])
			}

			s := d.createLive(key, map[string]any{"language_config": en, "messages_config": map[string]any{"receive_lifecycle_events": true}})
			msgs, code := runSession(t, s.URL, audio, 32, 0)
			v := viewLive(t, msgs)
			if code != 1000 || !v.ended || len(v.finals) != 0 || len(v.errors) == 0 {
				t.Fatalf("live: close %d, end_session %v, %d finals, errors %q", code, v.ended, len(v.finals), v.errors)
			}
			for _, e := range v.errors {
				if !strings.Contains(e, tc.msg) {
					t.Errorf("live error %q, want %q", e, tc.msg)
				}
			}
			job := d.waitLive(key, s.ID, time.Minute)
			psm, _ := job["post_session_metadata"].(map[string]any)
			lost, _ := psm["engine_errors"].(map[string]any)
			if job["status"] != "done" || lost["count"] != float64(len(v.errors)) || lost["last"] != tc.msg {
				t.Errorf("live job %v, post_session_metadata %v", job["status"], psm)
			}
			series := fmt.Sprintf(`earshot_remote_requests_total{action="transcribe",engine="gpu",outcome=%q}`, tc.outcome)
			if got, _ := metricValue(t, d, series); got < 2 {
				t.Errorf("%s = %v, want the batch and live failures counted", series, got)
			}
		})
	}
}
