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
// and go back to the full search below it; older audio weighs less.
func TestLiveLoadHysteresis(t *testing.T) {
	second := int(SampleRate)
	ld := newLiveLoad(nil)
	r := &leanRecorder{}
	var end int64
	add := func(ld *liveLoad, d time.Duration) {
		end += int64(second)
		ld.add(d, end, second)
	}
	step := func(ratio float64) {
		for range 10 { // 10 s of audio at this decode speed
			add(&ld, time.Duration(ratio*float64(time.Second)))
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
	ld = newLiveLoad(nil)
	for range 10 {
		add(&ld, 100*time.Millisecond)
	}
	for range 10 {
		add(&ld, 900*time.Millisecond)
	}
	if got := ld.ratio(); got < 0.8 {
		t.Errorf("ratio %.2f after 10 s at 0.9, want the recent speed", got)
	}
}

// TestLiveLoadChannels: a session's channels decode one after the other,
// so its decode speed is the decode time of every channel against the
// session time decoded. Two channels that talk at once, each decoded at
// 0.4 s per second, need 0.8 s per second; two that take turns, as a
// SIPREC call's legs do (one silent while the other talks), need 0.4, as
// one channel would: until 2026-11-29 they read 0.8 too, and the calls'
// segments went lean at half the load they should (issue 41).
func TestLiveLoadChannels(t *testing.T) {
	second := int64(SampleRate)
	const d = 400 * time.Millisecond
	for _, tt := range []struct {
		name string
		ends [][2]int64 // each block's channel and end, in write order
		want float64
	}{
		{"one channel", [][2]int64{{0, second}, {0, 2 * second}}, 0.4},
		{"two at once", [][2]int64{{0, second}, {1, second}, {0, 2 * second}, {1, 2 * second}}, 0.8},
		{"two in turn", [][2]int64{{0, second}, {1, 2 * second}, {0, 3 * second}, {1, 4 * second}}, 0.4},
		// A backlog written at once when a decoder came (Live.warm): 2 s
		// of channel 1 after 1 s of channel 0, 1.2 s of decoding over 2 s.
		{"backlog", [][2]int64{{0, second}, {1, 2 * second}}, 0.6},
	} {
		ld := newLiveLoad(nil)
		for _, b := range tt.ends {
			n := int(second)
			if tt.name == "backlog" && b[0] == 1 {
				n = int(2 * second)
			}
			ld.add(d*time.Duration(n)/time.Duration(second), b[1], n)
		}
		if got := ld.ratio(); got < tt.want-0.01 || got > tt.want+0.01 {
			t.Errorf("%s: ratio %.2f, want %.2f", tt.name, got, tt.want)
		}
	}
}

// TestLiveLoadNoLeanSearch: when the session's streams have no lean search
// (a wideband pool, or the search turned off), an overloaded box does not
// make its segments end at every utterance to switch searches they cannot
// switch to.
func TestLiveLoadNoLeanSearch(t *testing.T) {
	ld := newLiveLoad(nil)
	r := &leanRecorder{none: true}
	ld.segment(r) // the first segment: the box kept up so far
	ld.add(900*time.Millisecond, SampleRate, SampleRate)
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
