package sphinx

import (
	"math"
	"testing"

	"github.com/earshot-dev/earshot/recognizer"
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
	if err := st.flush(); err != nil {
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
