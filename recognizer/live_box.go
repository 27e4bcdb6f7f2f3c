package recognizer

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Box-wide overload control (BoxLoad).
const (
	// boxLoadWindow is the shortest time the box's CPU use is measured
	// over between two decisions.
	boxLoadWindow = 250 * time.Millisecond
	// boxBusyFrom and boxBusyUntil: when the box's CPUs were busier than
	// boxBusyFrom over the last window, a larger share of the segments
	// that start decode on the lean search (boxLeanUp more, up to all);
	// below boxBusyUntil a smaller one (boxLeanDown less). In between the
	// share holds. Chosen with livebench's narrowband sweep
	// (docs/live-tuning.md, 2026-11-25 13:00 UTC).
	boxBusyFrom  = 0.85
	boxBusyUntil = 0.70
	boxLeanUp    = 0.25
	boxLeanDown  = 0.0625
	// boxLoadSteps bounds how many windows' steps one reading makes.
	boxLoadSteps = 4
)

// BoxLoad measures how busy the box's CPUs are (every process's use,
// /proc/stat) and decides, for the live sessions of a process together,
// which share of their decoder segments start on the lean search
// (Stream.Lean): a session's own decode speed (liveLoad) says it is short
// of CPU only once it has fallen behind, and sessions that each judge
// alone all go back to the full search together and overload the box
// again; a share set from the box's CPU use holds it below saturation.
// The box counts as busy only while more calls decode at once (segments
// of streams with a lean search) than it has CPUs: with fewer, each call
// keeps up beside whatever else the box runs (pre-recorded jobs, or a
// client streaming a file faster than real time), and the calls' own
// decode speed (liveLoad) still catches one that falls behind.
// Safe for concurrent use; the zero value is not usable (NewBoxLoad).
type BoxLoad struct {
	// read returns the box's busy and total CPU time so far, in any unit
	// (clock ticks); ok false when it cannot be read.
	read func() (busy, total uint64, ok bool)
	now  func() time.Time
	cpus int

	mu          sync.Mutex
	open        int       // guarded by mu: segments decoding that could go lean (join, leave)
	at          time.Time // guarded by mu: the last reading's time
	busy, total uint64    // guarded by mu: the last reading
	share       float64   // guarded by mu: share of segments to start lean, 0..1
	acc         float64   // guarded by mu: the share's running remainder
}

// NewBoxLoad returns a meter of this box's CPU use (Linux /proc/stat;
// elsewhere it never asks for the lean search).
func NewBoxLoad() *BoxLoad {
	return &BoxLoad{read: procStat, now: time.Now, cpus: runtime.NumCPU()}
}

// join counts a segment that started decoding on a stream with a lean
// search; leave counts it out when it ends.
func (b *BoxLoad) join() {
	b.mu.Lock()
	b.open++
	b.mu.Unlock()
}

func (b *BoxLoad) leave() {
	b.mu.Lock()
	b.open--
	b.mu.Unlock()
}

// leanNext reports whether the segment that starts now should decode on
// the lean search: the share of segments the box's recent CPU use asks
// for, spread evenly over the segments as they start.
func (b *BoxLoad) leanNext() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if now := b.now(); now.Sub(b.at) >= boxLoadWindow {
		busy, total, ok := b.read()
		if ok && b.total > 0 && total > b.total && busy >= b.busy {
			// Steps per window since the last reading (segments need not
			// start every window), at most boxLoadSteps.
			n := min(now.Sub(b.at).Seconds()/boxLoadWindow.Seconds(), boxLoadSteps)
			u := float64(busy-b.busy) / float64(total-b.total)
			if b.open <= b.cpus {
				u = 0 // each call can have a CPU: not short
			}
			switch {
			case u > boxBusyFrom:
				b.share = min(1, b.share+n*boxLeanUp)
			case u < boxBusyUntil:
				b.share = max(0, b.share-n*boxLeanDown)
			}
		}
		if ok {
			b.at, b.busy, b.total = now, busy, total
		}
	}
	if b.open <= b.cpus {
		return false
	}
	if b.acc += b.share; b.acc >= 1 {
		b.acc--
		return true
	}
	return false
}

// procStat reads the box's CPU time from /proc/stat's first line: busy is
// all but idle and iowait (steal counts as busy: the CPU was not ours).
func procStat() (busy, total uint64, ok bool) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return 0, 0, false
	}
	fields := strings.Fields(sc.Text())
	if len(fields) < 6 || fields[0] != "cpu" {
		return 0, 0, false
	}
	for i, s := range fields[1:] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		if i >= 8 {
			break // guest time is counted in user time already
		}
		total += v
		if i != 3 && i != 4 { // idle, iowait
			busy += v
		}
	}
	return busy, total, true
}
