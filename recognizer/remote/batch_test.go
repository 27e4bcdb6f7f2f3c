package remote

import (
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/earshot-dev/earshot/recognizer"
)

// TestTranscribeOffsets runs the batch pipeline with this engine over a
// real 66 s recording. The stand-in finds each request's audio in the
// recording, and answers with the reference words that a proportional
// alignment puts in that span (times relative to the request's audio).
// Every word must come back at its place in the file.
func TestTranscribeOffsets(t *testing.T) {
	pcm, words := clip(t, "ljspeech-LJ001-0007-to-0016-long.wav")
	spans := recognizer.Segment(pcm, vadDefaults())
	if len(spans) < 3 {
		t.Fatalf("%d segments; the test needs several", len(spans))
	}
	// Reference alignment: words spread over the segments by duration,
	// evenly inside each. want[k] holds segment k's words in file time.
	total := 0
	for _, s := range spans {
		total += s.End - s.Start
	}
	want := make([][]recognizer.Word, len(spans))
	acc := 0
	for k, s := range spans {
		from := acc * len(words) / total
		acc += s.End - s.Start
		to := acc * len(words) / total
		n := to - from
		start := float64(s.Start) / recognizer.SampleRate
		step := float64(s.End-s.Start) / recognizer.SampleRate / float64(max(n, 1))
		for i, w := range words[from:to] {
			want[k] = append(want[k], recognizer.Word{Word: w, Start: start + step*float64(i), End: start + step*float64(i+1)})
		}
	}

	var mu sync.Mutex
	seen := map[int]bool{} // segment indexes requested
	cfg := testConfig("")
	cfg.Capacity = 3
	e, si := newHTTPEngine(t, cfg, func(w http.ResponseWriter, _ *http.Request, rec *received) {
		k := slices.IndexFunc(spans, func(s recognizer.Span) bool {
			return s.End-s.Start == len(rec.PCM) && slices.Equal(pcm[s.Start:s.End], rec.PCM)
		})
		if k < 0 {
			t.Errorf("request audio (%d samples) is no segment of the file", len(rec.PCM))
			http.Error(w, "unknown audio", 400)
			return
		}
		mu.Lock()
		if seen[k] {
			t.Errorf("segment %d sent twice", k)
		}
		seen[k] = true
		mu.Unlock()
		off := float64(spans[k].Start) / recognizer.SampleRate
		var ws []map[string]any
		var text []string
		for _, wd := range want[k] {
			ws = append(ws, map[string]any{"word": " " + wd.Word, "start": wd.Start - off, "end": wd.End - off, "probability": 0.8})
			text = append(text, wd.Word)
		}
		d := rec.seconds()
		writeJSON(w, 200, map[string]any{"language": "english", "duration": d, "text": strings.Join(text, " "),
			"segments": []map[string]any{{"start": 0, "end": d, "text": strings.Join(text, " "), "avg_logprob": -0.5, "no_speech_prob": 0.01, "words": ws}},
			"words":    ws})
	})
	res, err := recognizer.Transcribe(t.Context(), e, [][]int16{pcm}, recognizer.BatchOptions{Language: "en", Concurrency: 3})
	if err != nil {
		t.Fatal(err)
	}
	if si.count() != len(spans) || si.maxInflight() > cfg.Capacity {
		t.Errorf("%d requests (want %d), %d at once (capacity %d)", si.count(), len(spans), si.maxInflight(), cfg.Capacity)
	}
	var got []recognizer.Word
	var texts []string
	for _, u := range res.Utterances {
		got = append(got, u.Words...)
		texts = append(texts, u.Text)
		if u.Start != u.Words[0].Start || u.End != u.Words[len(u.Words)-1].End || u.Language != "en" {
			t.Errorf("utterance %.2f..%.2f %q: span or language off", u.Start, u.End, u.Language)
		}
	}
	if strings.Join(texts, " ") != strings.Join(words, " ") {
		t.Errorf("text\n got %s\nwant %s", strings.Join(texts, " "), strings.Join(words, " "))
	}
	flat := slices.Concat(want...)
	if len(got) != len(flat) {
		t.Fatalf("%d words, want %d", len(got), len(flat))
	}
	for i := range got {
		g, w := got[i], flat[i]
		if g.Word != w.Word || math.Abs(g.Start-w.Start) > 1e-6 || math.Abs(g.End-w.End) > 1e-6 || g.Confidence != 0.8 {
			t.Errorf("word %d: got %s, want %s", i, fmtWord(g), fmtWord(w))
		}
	}
}

func fmtWord(w recognizer.Word) string {
	return fmt.Sprintf("%q %.3f..%.3f (%.2f)", w.Word, w.Start, w.End, w.Confidence)
}

func vadDefaults() recognizer.VADConfig {
	var c recognizer.VADConfig
	c.SetDefaults()
	return c
}
