package recognizer

import "time"

// leanSearch is implemented by streams whose decoder has a cheaper search
// for when the box cannot keep up (sphinx: the telephone live pool's
// search with fewer active HMMs per frame). Lean switches the stream,
// before its first Write, to that search (on) or back to the full one,
// and reports whether the stream is on the lean search.
type leanSearch interface {
	Lean(on bool) bool
	// HasLean reports whether the stream's decoder has a lean search to
	// switch to: without one, the load control leaves the stream alone.
	HasLean() bool
}

// Overload control (liveLoad).
const (
	// liveLoadWindow is about how much recent decoded audio the decode
	// speed is measured over.
	liveLoadWindow = 3 * time.Second
	// liveLeanFrom and liveLeanUntil: a segment starts on the lean search
	// when decoding the session's recent audio took more than
	// liveLeanFrom of its duration in wall time (the decoder thread gets
	// too little CPU to keep up with more calls), and the segments stay
	// lean until it takes less than liveLeanUntil. Wall time, not CPU:
	// what the session waits for is what delays its finals. Chosen with
	// livebench's narrowband sweep (docs/live-tuning.md, 2026-11-25 06:30
	// UTC).
	liveLeanFrom  = 0.75
	liveLeanUntil = 0.45
)

// liveLoad measures how fast a session's decoding keeps up with its audio
// (wall time spent in the decoder against the session time decoded, over
// about the last liveLoadWindow of it) and decides, segment by segment,
// whether the next one decodes on the lean search.
//
// The channels of a session decode on one goroutine one after the other,
// so keeping up takes the sum of their decode times under real time: busy
// sums every channel's, and audio counts the session time that any
// channel decoded, once however many channels decoded it. Until
// 2026-11-29 audio counted each channel's samples as 1/channels of their
// duration, which is right only while every channel decodes: a SIPREC
// call's legs take turns, one silent (and not decoded) while the other
// talks, so its decode speed read twice what it was and its segments went
// lean at half the load they should: 13 of 21 segments of 4 SIPREC PCMU
// calls on a box with CPU to spare, none of 4 plain calls of the same
// audio (bench/CALLS.md, issue 41).
type liveLoad struct {
	busy    time.Duration // wall time decoding, decayed with audio
	audio   int64         // session samples some channel decoded, decayed
	covered int64         // session sample up to which audio has counted the time decoded
	window  int64         // liveLoadWindow in samples
	lean    bool          // the last segment's decision
	// fixed: a stream of the session could not go lean when asked (a
	// pool without a lean search: wideband, or turned off), so segments
	// are never ended early to switch (switchDue).
	fixed bool

	// box is the process's meter of the box's CPU use (nil: none);
	// boxLean is set when the open segment is lean because it asked so,
	// boxDue when it picked the open segment's end to go lean (switchDue).
	box             *BoxLoad
	boxLean, boxDue bool

	segments, leanSegments int // segments started, and on the lean search
}

func newLiveLoad(box *BoxLoad) liveLoad {
	return liveLoad{window: int64(liveLoadWindow) * SampleRate / int64(time.Second), box: box}
}

// add counts samples of one channel, the session's audio up to sample
// end, decoded in d of wall time: d always, the session time only where
// no channel's decoding counted it yet (channels are written in time
// order: Live.Write). Past the window, both sums halve, so older audio
// weighs less.
func (ld *liveLoad) add(d time.Duration, end int64, samples int) {
	ld.busy += d
	if from := max(end-int64(samples), ld.covered); end > from {
		ld.audio += end - from
	}
	ld.covered = max(ld.covered, end)
	if ld.audio > ld.window {
		ld.busy /= 2
		ld.audio /= 2
	}
}

// ratio is the wall time spent decoding per second of audio decoded
// recently, 0 before any audio.
func (ld *liveLoad) ratio() float64 {
	if ld.audio == 0 {
		return 0
	}
	return ld.busy.Seconds() / seconds64(ld.audio)
}

// wantLean reports whether the next segment should decode on the lean
// search: the recent decode speed against liveLeanFrom, or liveLeanUntil
// while the segments are lean already.
func (ld *liveLoad) wantLean() bool {
	r := ld.ratio()
	return r > liveLeanFrom || ld.lean && r > liveLeanUntil
}

// switchDue reports whether the open segment should end at its
// utterance's end instead of going on through the pause (a segment may
// run for liveSegmentMax, far too long to wait while the box falls
// behind): the session's own decode speed asks for the other search
// (wantLean; a segment lean by the box's share is not ended to go back),
// or, on the full search, the box's meter picks this utterance's end for
// the lean search (BoxLoad), which the next segment then takes. Only for
// streams with a lean search.
func (ld *liveLoad) switchDue(st Stream) bool {
	if ls, ok := st.(leanSearch); !ok || ld.fixed || !ls.HasLean() {
		return false
	}
	if want := ld.wantLean(); want != ld.lean && !(ld.boxLean && !want) {
		return true
	}
	if !ld.lean && ld.box != nil && ld.box.leanNext() {
		ld.boxDue = true
		return true
	}
	return false
}

// segment starts a decoder segment on ls: on its lean search when
// wantLean says so or the box's meter asks for it (BoxLoad), else on its
// full one.
func (ld *liveLoad) segment(ls leanSearch) {
	want := ld.wantLean()
	boxWant := !want && (ld.boxDue || ld.box != nil && !ld.fixed && ls.HasLean() && ld.box.leanNext())
	ld.boxDue = false
	ld.lean = ls.Lean(want || boxWant)
	ld.boxLean = boxWant && ld.lean
	if want && !ld.lean {
		ld.fixed = true
	}
	ld.segments++
	if ld.lean {
		ld.leanSegments++
	}
}

// LeanSegments reports how many of the session's decoder segments so far
// started on a lean search because the box was short of CPU (see
// liveLoad), and how many there were.
func (l *Live) LeanSegments() (lean, segments int) {
	return l.load.leanSegments, l.load.segments
}
