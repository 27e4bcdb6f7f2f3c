package recognizer

import (
	"testing"
	"time"
)

// leanRecorder is a stream's lean switch that records what it was asked;
// with none set it has no lean search (a wideband pool's stream).
type leanRecorder struct {
	asked []bool
	none  bool
}

func (r *leanRecorder) Lean(on bool) bool { r.asked = append(r.asked, on); return on && !r.none }
func (r *leanRecorder) HasLean() bool     { return !r.none }

// TestLiveLoadHysteresis: segments go lean when decoding took more than
// liveLeanFrom of the audio's duration, stay lean down to liveLeanUntil,
// and go back to the full search below it; older audio weighs less, and a
// two-channel session needs its decoding twice as fast.
func TestLiveLoadHysteresis(t *testing.T) {
	second := int(SampleRate)
	ld := newLiveLoad(1, nil)
	r := &leanRecorder{}
	step := func(ratio float64) {
		for range 10 { // 10 s of audio at this decode speed
			ld.add(time.Duration(ratio*float64(time.Second)), second)
		}
		ld.segment(r)
	}
	for _, ratio := range []float64{0.3, 0.9, 0.6, 0.5, 0.3, 0.6, 0.8} {
		step(ratio)
	}
	want := []bool{false, true, true, true, false, false, true}
	if len(r.asked) != len(want) {
		t.Fatalf("asked %v, want %v", r.asked, want)
	}
	for i := range want {
		if r.asked[i] != want[i] {
			t.Fatalf("asked %v, want %v", r.asked, want)
		}
	}
	if lean, segs := ld.leanSegments, ld.segments; lean != 4 || segs != 7 {
		t.Errorf("lean segments %d of %d, want 4 of 7", lean, segs)
	}

	// The measure follows the recent audio: 10 s at 0.9 after 10 s at 0.1.
	ld = newLiveLoad(1, nil)
	for range 10 {
		ld.add(100*time.Millisecond, second)
	}
	for range 10 {
		ld.add(900*time.Millisecond, second)
	}
	if got := ld.ratio(); got < 0.8 {
		t.Errorf("ratio %.2f after 10 s at 0.9, want the recent speed", got)
	}

	ld = newLiveLoad(2, nil)
	ld.add(400*time.Millisecond, second)
	if got := ld.ratio(); got < 0.79 || got > 0.81 {
		t.Errorf("two channels, 0.4 s per channel-second: ratio %.2f, want 0.8", got)
	}
}

// TestLiveLoadNoLeanSearch: when the session's streams have no lean search
// (a wideband pool, or the search turned off), an overloaded box does not
// make its segments end at every utterance to switch searches they cannot
// switch to.
func TestLiveLoadNoLeanSearch(t *testing.T) {
	ld := newLiveLoad(1, nil)
	r := &leanRecorder{none: true}
	ld.segment(r) // the first segment: the box kept up so far
	ld.add(900*time.Millisecond, int(SampleRate))
	// A Stream with a lean switch (only switchDue's type check runs).
	st := struct {
		Stream
		*leanRecorder
	}{leanRecorder: r}
	if ld.switchDue(st) {
		t.Error("switch due for a stream that could not go lean: every utterance would end its segment")
	}
	ld.segment(r)
	if ld.lean {
		t.Fatal("lean on a stream without a lean search")
	}
	if ld.switchDue(st) {
		t.Error("switch due after a refused switch")
	}
}
