package recognizer

import (
	"math"
	"slices"
	"testing"
	"time"
)

// fakeBox is a BoxLoad whose CPU readings and clock the test sets: each
// window's CPU use is util.
type fakeBox struct {
	*BoxLoad
	t           time.Time
	busy, total uint64
}

func newFakeBox() *fakeBox {
	f := &fakeBox{t: time.Unix(1e9, 0), busy: 500, total: 1000}
	f.BoxLoad = &BoxLoad{
		read: func() (uint64, uint64, bool) { return f.busy, f.total, true },
		now:  func() time.Time { return f.t },
		cpus: 2,
		open: 8, // 8 calls decoding on 2 CPUs
	}
	f.leanNext() // the first reading: no share yet
	return f
}

// window lets a window pass with the box's CPUs busy util of the time.
func (f *fakeBox) window(util float64) {
	f.t = f.t.Add(boxLoadWindow)
	f.busy += uint64(util * 1000)
	f.total += 1000
}

// TestBoxLoadShare: the share of segments that start lean rises by
// boxLeanUp for each window the box was busier than boxBusyFrom, holds
// between boxBusyUntil and it, falls by boxLeanDown below, and the lean
// segments are spread evenly over those that start.
func TestBoxLoadShare(t *testing.T) {
	f := newFakeBox()
	for _, c := range []struct{ util, share float64 }{
		{0.5, 0}, {0.95, 0.25}, {1.0, 0.5}, {0.8, 0.5}, {0.6, 0.4375}, {0.6, 0.375}, {0.9, 0.625}, {0.3, 0.5625},
	} {
		f.window(c.util)
		lean, run := 0, 0
		for range 8 {
			if f.leanNext() {
				lean++
				if run++; run > 1 && c.share <= 0.5 {
					t.Errorf("util %.2f: two lean segments in a row at a share of %.3f", c.util, c.share)
				}
			} else {
				run = 0
			}
		}
		if f.share != c.share || math.Abs(float64(lean)-8*c.share) > 1 {
			t.Errorf("util %.2f: share %.4f, %d of 8 segments lean; want share %.4f", c.util, f.share, lean, c.share)
		}
	}
	// A box at full use for long: every segment lean, and no more.
	for range 10 {
		f.window(1)
		f.leanNext()
	}
	if f.share != 1 {
		t.Errorf("share %.2f after 10 s of a busy box, want 1", f.share)
	}
}

// TestLiveLoadBox: a session that keeps up on its own still decodes the
// share of its segments the box asks for on the lean search, and the box
// may pick the end of any utterance of a full segment to switch (before,
// only the session's own decode speed did, so 8 calls on a 2-CPU box all
// decoded their first segments on the full search until each fell
// behind: livebench N = 8 finals p95 2 to 2.8 s, the late ones in the
// first 10 s); a segment lean by the box runs to its natural end rather
// than ending at the next utterance to switch back, and a session that
// falls behind goes lean whatever the box's share.
func TestLiveLoadBox(t *testing.T) {
	f := newFakeBox()
	f.window(1)
	f.window(1) // share 0.5
	ld := newLiveLoad(f.BoxLoad)
	ld.add(300*time.Millisecond, SampleRate, SampleRate) // keeps up
	r := &leanRecorder{}
	st := struct {
		Stream
		*leanRecorder
	}{leanRecorder: r}
	var got []bool
	for range 4 {
		ld.segment(r)
		got = append(got, ld.lean)
		// The segment's first utterance ends: switch or go on.
		if due := ld.switchDue(st); due == ld.lean {
			t.Fatalf("segments %v: switch due %v", got, due)
		}
	}
	if want := []bool{false, true, false, true}; !slices.Equal(got, want) {
		t.Errorf("segments lean %v, want %v at the box's share of 0.5", got, want)
	}
	ld.add(10*time.Second, 2*SampleRate, SampleRate) // falls behind
	if !ld.lean && !ld.switchDue(st) {
		t.Error("a session fallen behind on a full segment: no switch due")
	}
	for range 3 {
		ld.segment(r)
		if !ld.lean {
			t.Fatal("a session fallen behind started a segment on the full search")
		}
	}
	// Without a meter the session judges alone.
	ld = newLiveLoad(nil)
	ld.add(300*time.Millisecond, SampleRate, SampleRate)
	ld.segment(r)
	if ld.lean {
		t.Error("lean without a meter while the session keeps up")
	}
}

// TestBoxLoadFewCalls: with no more calls decoding than CPUs, a busy box
// sends no segment to the lean search, and the share falls back: each
// call keeps up beside the rest of the box's work (before, asrbench's two
// live sessions beside two pre-recorded jobs went lean, and their finals
// lost 7 and 12 points at mu-law and A-law, make bench 2026-11-25 13:05).
// Segments count in and out as they start and end (Live.release).
func TestBoxLoadFewCalls(t *testing.T) {
	f := newFakeBox()
	f.window(1)
	f.window(1)
	lean := 0
	for range 4 {
		if f.leanNext() {
			lean++
		}
	}
	if lean != 2 {
		t.Fatalf("8 calls on a busy box: %d of 4 segments lean, want 2", lean)
	}
	f.open = 2
	for range 8 {
		f.window(1)
		if f.leanNext() {
			t.Fatal("2 calls on 2 CPUs went lean on a busy box")
		}
	}
	if f.share != 0 {
		t.Errorf("share %.3f after 2 s with 2 calls, want 0", f.share)
	}
	f.join()
	f.leave()
	if f.open != 2 {
		t.Errorf("open %d after a join and a leave, want 2", f.open)
	}
}
