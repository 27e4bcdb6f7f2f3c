package remote

import (
	"errors"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/earshot-dev/earshot/recognizer"
)

// writeChunks writes pcm in 100 ms chunks, as a live pipeline does.
func writeChunks(t *testing.T, st recognizer.Stream, pcm []int16) {
	t.Helper()
	for i := 0; i < len(pcm); i += 1600 {
		if err := st.Write(pcm[i:min(i+1600, len(pcm))]); err != nil {
			t.Fatal(err)
		}
	}
}

// speechReply answers every request with the words of the clip whose
// length matches the audio received, spread over 5%..95% of that audio.
func speechReply(lang string, clips map[int][]string) func(http.ResponseWriter, *http.Request, *received) {
	return func(w http.ResponseWriter, _ *http.Request, rec *received) {
		words, ok := clips[len(rec.PCM)]
		if !ok {
			writeJSON(w, 400, map[string]any{"error": map[string]any{"message": "unknown audio"}})
			return
		}
		d := rec.seconds()
		writeJSON(w, 200, reply(lang, transcript{words, 0.05 * d, 0.95 * d}, d, -0.2, nil))
	}
}

func TestFinishSendsUtteranceAndMapsWords(t *testing.T) {
	pcm1, words1 := clip(t, "ls-test-clean-1089-134691-0000.wav")
	pcm2, words2 := clip(t, "ls-test-clean-1089-134686-0001.wav")
	cfg := testConfig("")
	cfg.APIKey = "sk-test-123"
	cfg.Prompt = "Stephen Dedalus"
	e, si := newHTTPEngine(t, cfg, speechReply("english", map[int][]string{len(pcm1): words1, len(pcm2): words2}))

	st, err := e.NewStream(t.Context(), recognizer.StreamOptions{Language: "en"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i, c := range []struct {
		pcm   []int16
		words []string
	}{{pcm1, words1}, {pcm2, words2}} {
		writeChunks(t, st, c.pcm)
		u, err := st.Finish()
		if err != nil {
			t.Fatalf("utterance %d: %v", i, err)
		}
		reqs := si.requests()
		if len(reqs) != i+1 {
			t.Fatalf("utterance %d: %d requests, want %d", i, len(reqs), i+1)
		}
		rec := reqs[i]
		checkFields(t, rec, map[string][]string{
			"model":                     {cfg.Model},
			"language":                  {"en"},
			"prompt":                    {"Stephen Dedalus"},
			"response_format":           {"verbose_json"},
			"timestamp_granularities[]": {"word", "segment"},
		})
		if !strings.HasSuffix(rec.Path, "/v1/audio/transcriptions") {
			t.Errorf("path %q", rec.Path)
		}
		if rec.Auth != "Bearer sk-test-123" {
			t.Errorf("authorization %q", rec.Auth)
		}
		if rec.FileType != "audio/wav" || !strings.HasSuffix(rec.FileName, ".wav") {
			t.Errorf("file part %q %q", rec.FileName, rec.FileType)
		}
		if !slices.Equal(rec.PCM, c.pcm) {
			t.Errorf("utterance %d: server got %d samples, want the %d written since the last Finish", i, len(rec.PCM), len(c.pcm))
		}

		// Mapping: words trimmed, times relative to this utterance's audio.
		d := float64(len(c.pcm)) / recognizer.SampleRate
		if u.Text != strings.Join(c.words, " ") {
			t.Errorf("text %q", u.Text)
		}
		if u.Language != "en" {
			t.Errorf("language %q, want en (server said english)", u.Language)
		}
		if len(u.Words) != len(c.words) {
			t.Fatalf("%d words, want %d", len(u.Words), len(c.words))
		}
		step := 0.9 * d / float64(len(c.words))
		for j, w := range u.Words {
			if w.Word != c.words[j] {
				t.Errorf("word %d %q, want %q", j, w.Word, c.words[j])
			}
			if want := round3(0.05*d + step*float64(j)); math.Abs(w.Start-want) > 1e-9 {
				t.Errorf("word %d start %.3f, want %.3f", j, w.Start, want)
			}
			if math.Abs(w.Confidence-math.Exp(-0.2)) > 1e-9 {
				t.Errorf("word %d confidence %v, want exp(avg_logprob)", j, w.Confidence)
			}
		}
		if math.Abs(u.Start-round3(0.05*d)) > 1e-9 || math.Abs(u.End-round3(0.95*d)) > 1e-9 {
			t.Errorf("utterance %.3f..%.3f, want %.3f..%.3f", u.Start, u.End, 0.05*d, 0.95*d)
		}
		if math.Abs(u.Confidence-math.Exp(-0.2)) > 1e-9 {
			t.Errorf("confidence %v", u.Confidence)
		}
	}
}

// checkFields compares every multipart field the server received.
func checkFields(t *testing.T, rec *received, want map[string][]string) {
	t.Helper()
	for k, v := range want {
		if !slices.Equal(rec.Fields[k], v) {
			t.Errorf("field %s = %q, want %q", k, rec.Fields[k], v)
		}
	}
	for k := range rec.Fields {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected field %s = %q", k, rec.Fields[k])
		}
	}
}

func TestFinishDetectsLanguage(t *testing.T) {
	pcm, words := clip(t, "ls-test-clean-1089-134691-0000.wav")
	e, si := newHTTPEngine(t, testConfig(""), speechReply("German", map[int][]string{len(pcm): words}))
	st, err := e.NewStream(t.Context(), recognizer.StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	writeChunks(t, st, pcm)
	u, err := st.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if u.Language != "de" {
		t.Errorf("language %q, want de", u.Language)
	}
	checkFields(t, si.requests()[0], map[string][]string{
		"model": {"Systran/faster-whisper-small"}, "response_format": {"verbose_json"},
		"timestamp_granularities[]": {"word", "segment"},
	})
}

func TestFinishShortAudioSkipsRequest(t *testing.T) {
	e, si := newHTTPEngine(t, testConfig(""), func(w http.ResponseWriter, _ *http.Request, _ *received) {
		writeJSON(w, 200, map[string]any{"text": "hallucination", "language": "en"})
	})
	st, err := e.NewStream(t.Context(), recognizer.StreamOptions{Language: "en"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, n := range []int{0, minSamples - 1} {
		if err := st.Write(make([]int16, n)); err != nil {
			t.Fatal(err)
		}
		u, err := st.Finish()
		if err != nil || len(u.Words) != 0 || u.Language != "en" {
			t.Errorf("%d samples: %+v, %v", n, u, err)
		}
	}
	if si.count() != 0 {
		t.Errorf("%d requests for under 0.1 s of audio", si.count())
	}
	// At 0.1 s the request is made.
	st.Write(make([]int16, minSamples))
	if u, err := st.Finish(); err != nil || u.Text != "hallucination" {
		t.Errorf("0.1 s: %+v, %v", u, err)
	}
}

func TestWriteBounded(t *testing.T) {
	e, _ := newHTTPEngine(t, testConfig(""), nil)
	st, err := e.NewStream(t.Context(), recognizer.StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Write(make([]int16, maxSamples)); err != nil {
		t.Fatal(err)
	}
	if err := st.Write(make([]int16, 1)); !errors.Is(err, ErrTooLong) {
		t.Errorf("write past MaxAudio: %v", err)
	}
	st.Close()
	if err := st.Write(make([]int16, 1)); !errors.Is(err, recognizer.ErrClosed) {
		t.Errorf("write after close: %v", err)
	}
	if _, err := st.Finish(); !errors.Is(err, recognizer.ErrClosed) {
		t.Errorf("finish after close: %v", err)
	}
	if err := st.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
	if _, busy := e.Stats(); busy != 0 {
		t.Errorf("%d slots busy after close", busy)
	}
}

func TestPartial(t *testing.T) {
	pcm, words := clip(t, "ls-test-clean-1089-134691-0001.wav")
	const chunk = 1600
	held := len(pcm) - chunk // a request with this much audio waits to be cancelled
	synctest.Test(t, func(t *testing.T) {
		e, si := newPipeEngine(t, testConfig(""), func(w http.ResponseWriter, r *http.Request, rec *received) {
			if len(rec.PCM) == held {
				<-r.Context().Done()
				return
			}
			// The words of the utterance so far.
			n := len(rec.PCM) * len(words) / len(pcm)
			d := rec.seconds()
			writeJSON(w, 200, reply("en", transcript{words[:n], 0, d}, d, -0.1, nil))
		})
		st, err := e.NewStream(t.Context(), recognizer.StreamOptions{Language: "en"})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		checkPartial := func(step string, wantRequests, wantSamples int) {
			t.Helper()
			synctest.Wait() // the partial request, if any, has completed
			h, ok := st.Partial()
			reqs := si.requests()
			if len(reqs) != wantRequests {
				t.Fatalf("%s: %d requests, want %d", step, len(reqs), wantRequests)
			}
			if wantSamples == 0 {
				if ok {
					t.Errorf("%s: partial %+v before any answer", step, h)
				}
				return
			}
			if got := len(reqs[len(reqs)-1].PCM); got != wantSamples {
				t.Errorf("%s: partial request sent %d samples, want %d", step, got, wantSamples)
			}
			n := wantSamples * len(words) / len(pcm)
			if !ok || h.Text != strings.Join(words[:n], " ") || len(h.Words) != n {
				t.Errorf("%s: partial %+v %v, want %d words", step, h, ok, n)
			}
		}

		st.Partial()
		checkPartial("no audio", 0, 0)
		half := len(pcm) / 2
		writeChunks(t, st, pcm[:half])
		if _, ok := st.Partial(); ok { // starts a request, returns at once
			t.Error("partial result before any answer")
		}
		checkPartial("first", 1, half)

		// New audio within PartialInterval: no request.
		writeChunks(t, st, pcm[half:half+chunk])
		st.Partial()
		checkPartial("within interval", 1, half)
		// After it: one request with the utterance so far.
		wait(time.Second)
		st.Partial()
		checkPartial("after interval", 2, half+chunk)
		// No new audio: no request, however long.
		wait(5 * time.Second)
		st.Partial()
		checkPartial("no new audio", 2, half+chunk)

		// Finish cancels a partial request in flight and sends everything.
		writeChunks(t, st, pcm[half+chunk:held])
		st.Partial()
		synctest.Wait()
		if si.count() != 3 {
			t.Fatalf("%d requests, want the held partial as third", si.count())
		}
		writeChunks(t, st, pcm[held:])
		u, err := st.Finish()
		if err != nil {
			t.Fatal(err)
		}
		if u.Text != strings.Join(words, " ") {
			t.Errorf("final %q", u.Text)
		}
		if got := len(si.requests()[3].PCM); got != len(pcm) {
			t.Errorf("final request %d samples, want %d", got, len(pcm))
		}
		if h, ok := st.Partial(); ok {
			t.Errorf("partial %+v after Finish", h)
		}
		if si.maxInflight() != 1 {
			t.Errorf("%d requests in flight at once, want 1 per stream", si.maxInflight())
		}

		// Close waits for a partial request it cancels.
		writeChunks(t, st, pcm[:held])
		wait(time.Second)
		st.Partial()
		synctest.Wait()
		if si.count() != 5 {
			t.Fatalf("%d requests, want a fifth (held)", si.count())
		}
		done := st.(*Stream).partialDone
		st.Close()
		select {
		case <-done:
		default:
			t.Error("Close returned before its partial request goroutine ended")
		}
		if _, busy := e.Stats(); busy != 0 {
			t.Errorf("%d slots busy after close", busy)
		}
	})
}

func TestPartialDisabled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig("")
		cfg.PartialInterval = -1
		e, si := newPipeEngine(t, cfg, func(w http.ResponseWriter, _ *http.Request, rec *received) {
			writeJSON(w, 200, reply("en", transcript{[]string{"go"}, 0, rec.seconds()}, rec.seconds(), 0, nil))
		})
		st, err := e.NewStream(t.Context(), recognizer.StreamOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		for range 3 {
			st.Write(make([]int16, recognizer.SampleRate))
			wait(2 * time.Second)
			if _, ok := st.Partial(); ok {
				t.Error("partial result with partials disabled")
			}
			synctest.Wait()
		}
		if si.count() != 0 {
			t.Errorf("%d requests with partials disabled", si.count())
		}
	})
}
