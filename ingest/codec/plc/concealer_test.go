package plc

import (
	"errors"
	"math"
	"path/filepath"
	"testing"

	"github.com/earshot-dev/earshot/ingest/codec/codectest"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

func count(b []bool) int {
	n := 0
	for _, v := range b {
		if v {
			n++
		}
	}
	return n
}

// conceal plays pcm through c in packets of size samples, lost ones
// concealed (or zeroed when c is nil); it returns the output.
func conceal(t *testing.T, c *Concealer, pcm []int16, size int, lost []bool) []int16 {
	t.Helper()
	out := make([]int16, len(pcm))
	copy(out, pcm)
	for p := range lost {
		b := out[p*size : min((p+1)*size, len(out))]
		switch {
		case c == nil && lost[p]:
			clear(b)
		case c == nil:
		case lost[p]:
			if err := c.Conceal(b); err != nil {
				t.Fatal(err)
			}
		default:
			if err := c.Received(b); err != nil {
				t.Fatal(err)
			}
		}
	}
	return out
}

// levelMiss is the mean, over the lost packets, of how far in dB the
// level (mean square, floored at 1 LSB squared) of got is from want's:
// silence misses by the speech's level above the floor.
func levelMiss(want, got []int16, size int, lost []bool) float64 {
	var miss float64
	n := 0
	for p := range lost {
		if !lost[p] {
			continue
		}
		a, b := p*size, min((p+1)*size, len(want))
		var ew, eg float64
		for i := a; i < b; i++ {
			ew += float64(want[i]) * float64(want[i])
			eg += float64(got[i]) * float64(got[i])
		}
		ew, eg = max(ew/float64(b-a), 1), max(eg/float64(b-a), 1)
		miss += math.Abs(10 * math.Log10(ew/eg))
		n++
	}
	return miss / float64(n)
}

// TestConcealSpeech: bursts of 20 ms packets lost from real 8 kHz speech
// are filled at a level far closer to the speech's than silence (the
// fill is not the lost waveform: spandsp starts it with the last quarter
// period time-reversed, so a sample-by-sample error is no better than
// silence's; the recogniser's features follow the level and spectrum);
// the received samples away from the losses are untouched and the length
// is the same.
func TestConcealSpeech(t *testing.T) {
	pcm, err := codectest.PCM8k(filepath.Join(recognizertest.SpeechDir(t), "ls-test-clean-1089-134686-0000.wav"))
	if err != nil {
		t.Fatal(err)
	}
	const size = 160
	lost := codectest.BurstLoss(len(pcm) / size)
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got := conceal(t, c, pcm, size, lost)
	silent := conceal(t, nil, pcm, size, lost)
	if len(got) != len(pcm) {
		t.Fatalf("%d samples out of %d", len(got), len(pcm))
	}
	miss, silence := levelMiss(pcm, got, size, lost), levelMiss(pcm, silent, size, lost)
	t.Logf("%d of %d packets lost: level off by %.1f dB on average, silence by %.1f dB", count(lost), len(lost), miss, silence)
	if miss > silence/2 {
		t.Errorf("concealed level off by %.1f dB, silence by %.1f dB: want at most half", miss, silence)
	}
	// Received packets are as they came except the start of the first
	// after a loss (a quarter pitch period, at most 30 samples, blended).
	for p := range lost {
		if lost[p] {
			continue
		}
		from := p * size
		if p > 0 && lost[p-1] {
			from += overlapMax
		}
		for i := from; i < min((p+1)*size, len(pcm)); i++ {
			if got[i] != pcm[i] {
				t.Fatalf("received sample %d (packet %d) changed: %d, was %d", i, p, got[i], pcm[i])
			}
		}
	}
}

// TestConcealBounds: a fill at the start of a stream (no history) is
// silence; fills shorter than a quarter pitch period at the start of a
// loss write nothing past what they are given; a loss of minutes fades to
// zeros and keeps the count bounded; Close is idempotent.
func TestConcealBounds(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	start := make([]int16, 320)
	for i := range start {
		start[i] = 7
	}
	if err := c.Conceal(start); err != nil {
		t.Fatal(err)
	}
	for i, v := range start {
		if v != 0 {
			t.Fatalf("fill with no history: sample %d is %d, want silence", i, v)
		}
	}
	tone := make([]int16, 800)
	for i := range tone {
		tone[i] = int16(8000 * math.Sin(2*math.Pi*float64(i)/57))
	}
	for n := 1; n < 2*overlapMax; n++ {
		if err := c.Received(tone); err != nil {
			t.Fatal(err)
		}
		buf := make([]int16, n+overlapMax)
		for i := range buf {
			buf[i] = 12345
		}
		if err := c.Conceal(buf[:n]); err != nil {
			t.Fatal(err)
		}
		for i := n; i < len(buf); i++ {
			if buf[i] != 12345 {
				t.Fatalf("a %d-sample fill wrote sample %d past its end", n, i)
			}
		}
		if buf[0] == 0 {
			t.Fatalf("a %d-sample fill after a tone is silence", n)
		}
	}
	if err := c.Received(tone); err != nil {
		t.Fatal(err)
	}
	buf := make([]int16, 8000)
	for range 60 * 8 { // a minute at 8 kHz
		if err := c.Conceal(buf); err != nil {
			t.Fatal(err)
		}
	}
	if c.missing > MaxFill {
		t.Fatalf("%d samples counted missing, want at most %d", c.missing, MaxFill)
	}
	for i, v := range buf {
		if v != 0 {
			t.Fatalf("a minute into a loss sample %d is %d, want silence", i, v)
		}
	}
	if got := int(c.st.missing_samples); got > MaxFill {
		t.Fatalf("spandsp counts %d missing samples, want at most %d", got, MaxFill)
	}
	c.Close()
	c.Close()
	if err := c.Conceal(buf); !errors.Is(err, ErrClosed) {
		t.Errorf("Conceal after Close: %v, want ErrClosed", err)
	}
	if err := c.Received(buf); !errors.Is(err, ErrClosed) {
		t.Errorf("Received after Close: %v, want ErrClosed", err)
	}
}

// level is pcm's RMS and largest magnitude.
func level(pcm []int16) (rms float64, peak int) {
	var e float64
	for _, v := range pcm {
		e += float64(v) * float64(v)
		peak = max(peak, int(v), -int(v))
	}
	return math.Sqrt(e / float64(max(len(pcm), 1))), peak
}

// TestConcealNoDigitalSilence: a burst of six 20 ms packets lost inside
// real speech is filled without a 10 ms frame of digital silence (below
// -80 dBFS, what the batch segmenter takes for a client's zeros) by a
// NewNoiseFloor concealer: past the 50 ms fade the fill is the noise
// floor, far below the speech, also a minute into a loss; a fill with no
// history stays silence.
func TestConcealNoDigitalSilence(t *testing.T) {
	pcm, err := codectest.PCM8k(filepath.Join(recognizertest.SpeechDir(t), "ls-test-clean-1089-134686-0000.wav"))
	if err != nil {
		t.Fatal(err)
	}
	const size, frame = 160, 80
	// Six packets lost from the loudest stretch of the clip's first 3 s.
	at, best := 0, 0.0
	for p := 10; p+8 < min(len(pcm), 3*8000)/size; p++ {
		if rms, _ := level(pcm[p*size : (p+6)*size]); rms > best {
			at, best = p, rms
		}
	}
	lost := make([]bool, at+8)
	for p := at; p < at+6; p++ {
		lost[p] = true
	}
	c, err := NewNoiseFloor()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got := conceal(t, c, pcm[:len(lost)*size], size, lost)
	fill := got[at*size : (at+6)*size]
	for f := 0; f+frame <= len(fill); f += frame {
		rms, _ := level(fill[f : f+frame])
		if db := 20 * math.Log10(max(rms, 1e-9)/32768); db < -80 {
			t.Fatalf("10 ms frame %d of the 120 ms fill is at %.1f dBFS: digital silence inside speech (speech at %.1f dBFS)", f/frame, db, 20*math.Log10(best/32768))
		}
	}
	if rms, peak := level(fill[len(fill)-size:]); rms > 2*floorSigma || peak > 8*floorSigma {
		t.Errorf("the fill's last 20 ms: rms %.1f, peak %d; want the noise floor (sigma %d)", rms, peak, floorSigma)
	}
	// A minute into a loss: the floor, bounded.
	buf := make([]int16, 8000)
	for range 60 {
		if err := c.Conceal(buf); err != nil {
			t.Fatal(err)
		}
	}
	if rms, peak := level(buf); rms < floorSigma/2 || rms > 2*floorSigma || peak > 8*floorSigma {
		t.Errorf("a minute into a loss: rms %.1f, peak %d; want the noise floor (sigma %d)", rms, peak, floorSigma)
	}
	start := make([]int16, 960)
	c2, err := NewNoiseFloor()
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if err := c2.Conceal(start); err != nil {
		t.Fatal(err)
	}
	for i, v := range start {
		if v != 0 {
			t.Fatalf("fill with no history: sample %d is %d, want silence", i, v)
		}
	}
}
