package sphinx

import (
	"math"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// TestWriteGathersBlocks: a stream written 10 ms at a time (as
// recognizer.Live writes) decodes in blocks of writeBlock, not on every
// Write, and whatever reads the decoder first decodes what is pending:
// Path and Finish still see every sample written. Before, each Write was
// its own ps_process_raw call, and a narrowband call cost a third more
// CPU in the daemon than in blocks (livebench -narrow 1, 2026-11-25).
func TestWriteGathersBlocks(t *testing.T) {
	e := newEngine(t, 1)
	c, pcm := clip(t, "pocketsphinx-goforward.wav")
	st := openStream(t, e)
	const frame = 160 // 10 ms
	decodes, written := 0, 0
	for i := 0; i < len(pcm); i += frame {
		before := st.d.nSamples
		chunk := pcm[i:min(i+frame, len(pcm))]
		if err := st.Write(chunk); err != nil {
			t.Fatal(err)
		}
		written += len(chunk)
		if st.d.nSamples != before {
			decodes++
		}
		if behind := written - st.d.nSamples; behind >= writeBlock {
			t.Fatalf("after %d samples written, %d not decoded (block %d)", written, behind, writeBlock)
		}
	}
	if max := written/writeBlock + 1; decodes > max {
		t.Errorf("%d writes of 10 ms decoded %d times, want at most %d", (written+frame-1)/frame, decodes, max)
	}
	if got := pathText(st); got != c.Transcript {
		t.Errorf("path %q, want %q", got, c.Transcript)
	}
	if st.d.nSamples != written {
		t.Errorf("Path decoded %d of %d samples written", st.d.nSamples, written)
	}
	u, err := st.Finish()
	if err != nil || u.Text != c.Transcript {
		t.Fatalf("Finish: %q, %v; want %q", u.Text, err, c.Transcript)
	}
}

// TestSetCMNFromShortStart: a stream primed with a short sound of another
// voice (0.4 s of "go") and then written 5 s of a read sentence normalises
// by a mean close to the sentence's own: the start counts as its frames
// and the live mean follows the audio every block. Before, the start
// counted as 5 s and held for 3 s, and after 5 s of the sentence the live
// mean was still 0.60 of the way from the sentence's mean to the start's.
func TestSetCMNFromShortStart(t *testing.T) {
	e := newEngine(t, 1)
	_, gf := clip(t, "pocketsphinx-goforward.wav")
	_, body := clip(t, "ls-dev-clean-2412-153948-0000.wav")
	start := gf[int(0.45*recognizer.SampleRate):int(0.85*recognizer.SampleRate)]
	body = body[:5*recognizer.SampleRate]
	meanOf := func(pcm []int16) []float64 {
		st := openStream(t, e)
		if !st.d.setCMNFrom(pcm) {
			t.Fatal("setCMNFrom: no frame")
		}
		m := st.d.cmnMean()
		st.Close()
		return m
	}
	startMean, bodyMean := meanOf(start), meanOf(body)
	st := openStream(t, e)
	st.SetCMNFrom(start)
	writeChunks(t, st, body)
	if err := st.flush(false); err != nil {
		t.Fatal(err)
	}
	live := st.d.cmnMean()
	dist := func(a, b []float64) float64 {
		var s float64
		for i := range a {
			s += (a[i] - b[i]) * (a[i] - b[i])
		}
		return math.Sqrt(s)
	}
	ratio := dist(live, bodyMean) / dist(startMean, bodyMean)
	t.Logf("live mean after 5 s: %.3f of the way from the sentence's mean to the start's (c0 start %.2f, sentence %.2f, live %.2f)",
		ratio, startMean[0], bodyMean[0], live[0])
	if ratio > 0.25 {
		t.Errorf("live mean %.3f of the way from the sentence's mean to the start's, want <= 0.25", ratio)
	}
}

// checkUtterance asserts the invariants every utterance must keep.
func checkUtterance(t *testing.T, u recognizer.Utterance, audioSeconds float64) {
	t.Helper()
	if len(u.Words) == 0 {
		t.Fatal("no words")
	}
	var texts []string
	var sum float64
	prevEnd := 0.0
	for i, w := range u.Words {
		texts = append(texts, w.Word)
		sum += w.Confidence
		if w.Start < prevEnd-1e-9 || w.End < w.Start || w.End > audioSeconds+1e-9 {
			t.Errorf("word %d %q [%.2f, %.2f] not monotonic inside [0, %.2f] (previous end %.2f)",
				i, w.Word, w.Start, w.End, audioSeconds, prevEnd)
		}
		if w.Confidence < 0 || w.Confidence > 1 || math.IsNaN(w.Confidence) {
			t.Errorf("word %d %q confidence %v not in 0..1", i, w.Word, w.Confidence)
		}
		if strings.ContainsAny(w.Word, "<>[]()+") {
			t.Errorf("word %d %q is a filler or has a pronunciation suffix", i, w.Word)
		}
		prevEnd = w.End
	}
	if got := strings.Join(texts, " "); u.Text != got {
		t.Errorf("Text %q, words say %q", u.Text, got)
	}
	if want := sum / float64(len(u.Words)); math.Abs(u.Confidence-want) > 1e-9 {
		t.Errorf("utterance confidence %v, mean of words %v", u.Confidence, want)
	}
	if u.Start != u.Words[0].Start || u.End != u.Words[len(u.Words)-1].End {
		t.Errorf("utterance [%.2f, %.2f], words [%.2f, %.2f]", u.Start, u.End, u.Words[0].Start, u.Words[len(u.Words)-1].End)
	}
	if u.Language != "en" {
		t.Errorf("language %q", u.Language)
	}
}

func TestGoForward(t *testing.T) {
	e := newEngine(t, 1)
	c, pcm := clip(t, "pocketsphinx-goforward.wav")
	dur := float64(len(pcm)) / recognizer.SampleRate
	tests := []struct {
		name   string
		decode func(*Stream) (recognizer.Utterance, error)
	}{
		{"incremental", func(st *Stream) (recognizer.Utterance, error) {
			writeChunks(t, st, pcm)
			return st.Finish()
		}},
		{"whole", func(st *Stream) (recognizer.Utterance, error) { return st.Decode(pcm) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := openStream(t, e)
			u, err := tt.decode(st)
			if err != nil {
				t.Fatal(err)
			}
			if u.Text != c.Transcript {
				t.Fatalf("got %q, want %q", u.Text, c.Transcript)
			}
			checkUtterance(t, u, dur)
			// "go" starts after the leading silence, "meters" ends before
			// the trailing one (the clip has ~0.45 s before and after).
			if u.Start < 0.2 || u.End > dur-0.2 {
				t.Errorf("speech [%.2f, %.2f] of %.2f s audio does not leave the silences out", u.Start, u.End, dur)
			}
		})
	}
}

// TestWordTimesShift checks times follow the audio: the same clip after
// 2 s of silence has its words 2 s later (PocketSphinx's own silence
// removal would compress them).
func TestWordTimesShift(t *testing.T) {
	e := newEngine(t, 1)
	_, pcm := clip(t, "pocketsphinx-goforward.wav")
	st := openStream(t, e)
	a, err := st.Decode(pcm)
	if err != nil {
		t.Fatal(err)
	}
	padded := append(make([]int16, 2*recognizer.SampleRate), pcm...)
	writeChunks(t, st, padded)
	b, err := st.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Words) != len(b.Words) {
		t.Fatalf("%q vs %q", a.Text, b.Text)
	}
	for i := range a.Words {
		if d := b.Words[i].Start - a.Words[i].Start; math.Abs(d-2) > 0.05 {
			t.Errorf("word %q moved %.2f s, want 2", a.Words[i].Word, d)
		}
	}
}

// TestUtterancesRestart checks a stream decodes several utterances, each
// with times from 0, and that Partial sees words before Finish.
func TestUtterancesRestart(t *testing.T) {
	e := newEngine(t, 1)
	c, pcm := clip(t, "pocketsphinx-goforward.wav")
	st := openStream(t, e)
	if _, ok := st.Partial(); ok {
		t.Error("partial before any audio")
	}
	var first recognizer.Utterance
	for i := range 3 {
		writeChunks(t, st, pcm[:len(pcm)*3/4])
		h, ok := st.Partial()
		if !ok || !strings.HasPrefix(c.Transcript, strings.Fields(h.Text)[0]) {
			t.Errorf("utterance %d: partial %q, %v", i, h.Text, ok)
		}
		writeChunks(t, st, pcm[len(pcm)*3/4:])
		u, err := st.Finish()
		if err != nil {
			t.Fatal(err)
		}
		if u.Text != c.Transcript {
			t.Errorf("utterance %d: %q", i, u.Text)
		}
		if i == 0 {
			first = u
			continue
		}
		if math.Abs(u.Start-first.Start) > 0.05 || math.Abs(u.End-first.End) > 0.05 {
			t.Errorf("utterance %d at [%.2f, %.2f], first at [%.2f, %.2f]", i, u.Start, u.End, first.Start, first.End)
		}
	}
	u, err := st.Finish()
	if err != nil || len(u.Words) != 0 {
		t.Errorf("Finish without audio: %+v, %v", u, err)
	}
}

// TestLibriSpeechWER bounds accuracy on a read-speech clip. Measured on
// 2026-11-21 with Debian's 0.8+5prealpha en-us model: whole 3/30 errors
// (0.100, the same as pocketsphinx_batch), incremental 5/30 (0.167); the
// bounds add about two words of margin.
func TestLibriSpeechWER(t *testing.T) {
	e := newEngine(t, 2)
	c, pcm := clip(t, "ls-test-clean-1995-1837-0001.wav")
	dur := float64(len(pcm)) / recognizer.SampleRate
	tests := []struct {
		name   string
		maxWER float64
		decode func(*Stream) (recognizer.Utterance, error)
	}{
		{"whole", 0.17, func(st *Stream) (recognizer.Utterance, error) { return st.Decode(pcm) }},
		{"incremental", 0.24, func(st *Stream) (recognizer.Utterance, error) {
			writeChunks(t, st, pcm)
			return st.Finish()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st := openStream(t, e)
			u, err := tt.decode(st)
			if err != nil {
				t.Fatal(err)
			}
			checkUtterance(t, u, dur)
			wer := recognizertest.WER(c.Transcript, u.Text)
			t.Logf("WER %.3f: %q", wer, u.Text)
			if wer > tt.maxWER {
				t.Errorf("WER %.3f > %.3f", wer, tt.maxWER)
			}
		})
	}
}

// TestSetCMNFrom checks that an incremental decode primed with the mean
// cepstrum of the utterance's own audio gives what a one-pass Decode
// (normalised over the whole utterance, as pocketsphinx_batch does) gives:
// the same words and times. The clips are under 3 s, the window in which
// PocketSphinx's live normalisation keeps the primed mean unchanged.
func TestSetCMNFrom(t *testing.T) {
	e := newEngine(t, 1)
	for _, name := range []string{"pocketsphinx-goforward.wav", "ls-test-clean-1089-134691-0000.wav"} {
		t.Run(name, func(t *testing.T) {
			_, pcm := clip(t, name)
			st := openStream(t, e)
			whole, err := st.Decode(pcm)
			if err != nil {
				t.Fatal(err)
			}
			st.SetCMNFrom(pcm)
			writeChunks(t, st, pcm)
			primed, err := st.Finish()
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("one pass %q, primed incremental %q", whole.Text, primed.Text)
			if primed.Text != whole.Text || len(primed.Words) != len(whole.Words) {
				t.Fatalf("primed incremental %q, one pass %q", primed.Text, whole.Text)
			}
			for i, w := range primed.Words {
				if w.Start != whole.Words[i].Start || w.End != whole.Words[i].End {
					t.Errorf("word %d %+v, one pass %+v", i, w, whole.Words[i])
				}
			}
		})
	}
}
