package recognizer

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// CPU is the process's one CPU admission policy: which decode runs when.
// The composition root makes one (app.Run, from sphinx.live_decodes) and
// hands it to the engines (pipeline.New, sphinx.New: live decodes), the live
// sessions (LiveConfig.BoxLoad, from Box) and the batch passes (daemon/live's
// gate, Batch...); there is no other, and no process-wide state. It holds
// three rules, each as before in its own package:
//   - live decodes: at most n decoder blocks and segment-end lattice passes
//     of live streams run at once (LiveDecode), so a block waits for a free
//     CPU and then decodes to its end instead of the kernel time-slicing more
//     decoders than CPUs on cold caches: 8 narrowband calls on a 2-CPU VM at
//     PocketSphinx's own search settings cost 0.22 to 0.26 CPU s per
//     call-second without the gate, 0.15 with it (docs/live-tuning.md, the log
//     of 2026-11-28). Whole recordings (Stream.Decode) are not gated: the
//     batch rule keeps them to one CPU while calls are live, and a pass
//     holding a slot for seconds would starve the calls;
//   - the box's load (Box): the share of live segments that start on a lean
//     search while the box is short of CPU (BoxLoad);
//   - batch passes below live audio (BatchOpen, BatchAcquire, BatchRelease):
//     while any live session exists at most one decoder goes to batch passes
//     (one core for live audio on a 2-core box), else one per CPU; and, when
//     live calls share the batch passes' pool, passes take a decoder only
//     while every live channel could still hold one.
//
// Safe for concurrent use; a nil *CPU admits everything at once and has no
// box meter.
type CPU struct {
	gate     *liveGate    // the live decodes' slots; nil: no limit
	livePeak atomic.Int32 // the most live decodes inside the gate at once (tests)
	box      *BoxLoad

	mu    sync.Mutex
	held  int           // guarded by mu: decoders held by batch passes
	wake  chan struct{} // guarded by mu: closed and replaced when held drops
	bcpus int           // batch passes' decoders with no live session: runtime.NumCPU
}

// NewCPU returns the policy for a process whose live decodes are bounded
// by liveDecodes (sphinx.live_decodes): 0 is one per CPU Go uses
// (GOMAXPROCS), below 0 no bound.
func NewCPU(liveDecodes int) *CPU {
	c := &CPU{box: NewBoxLoad(), wake: make(chan struct{}), bcpus: runtime.NumCPU()}
	if liveDecodes == 0 {
		liveDecodes = runtime.GOMAXPROCS(0)
	}
	if liveDecodes > 0 {
		c.gate = &liveGate{slots: liveDecodes}
	}
	return c
}

// LiveDecodes is the live decodes' bound, 0 for none.
func (c *CPU) LiveDecodes() int {
	if c == nil || c.gate == nil {
		return 0
	}
	return c.gate.slots
}

// LiveDecode runs f, one live decode, once the gate has room for it (at
// once without a bound): a block of audio a stream decodes as it comes.
func (c *CPU) LiveDecode(f func()) { c.liveDecode(false, f) }

// LiveRead runs f, the decode a reader of a live stream waits on (a
// final's or partial's path, a segment's end), as LiveDecode does but
// ahead of every waiting LiveDecode: the gate's next free slot goes to
// the oldest waiting read, so a final is not queued behind the blocks of
// every other call (issue 41: under 8 calls on 2 CPUs a final's read
// waited for the blocks of the streams before it).
func (c *CPU) LiveRead(f func()) { c.liveDecode(true, f) }

func (c *CPU) liveDecode(read bool, f func()) {
	if c == nil || c.gate == nil {
		f()
		return
	}
	n := c.gate.acquire(read)
	defer c.gate.release()
	for p := c.livePeak.Load(); n > p && !c.livePeak.CompareAndSwap(p, n); p = c.livePeak.Load() {
	}
	f()
}

// LivePeak is the most live decodes that ran at once since c was made.
func (c *CPU) LivePeak() int {
	if c == nil {
		return 0
	}
	return int(c.livePeak.Load())
}

// Box is the process's meter of the box's CPU use, shared by its live
// sessions (LiveConfig.BoxLoad); nil for a nil c.
func (c *CPU) Box() *BoxLoad {
	if c == nil {
		return nil
	}
	return c.box
}

// batchOpenLocked reports whether a batch pass may take one more decoder
// with live channels running on a pool of capacity decoders (math.MaxInt
// when live audio has pools of its own).
func (c *CPU) batchOpenLocked(live, capacity int) bool {
	limit := c.bcpus
	if live > 0 {
		limit = 1
	}
	return c.held < limit && c.held+live < capacity
}

// BatchOpen reports whether a batch pass could start decoding now, with
// live channels that could each need a decoder of capacity.
func (c *CPU) BatchOpen(live, capacity int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.batchOpenLocked(live, capacity)
}

// BatchAcquire waits until a batch pass may take one more decoder: demand
// says how many live channels there are and the capacity they share with
// the passes, asked again whenever a pass releases one and every poll
// (live sessions come and go without telling the policy). It returns ctx's
// cause when ctx ends first.
func (c *CPU) BatchAcquire(ctx context.Context, poll time.Duration, demand func() (live, capacity int)) error {
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		live, capacity := demand()
		c.mu.Lock()
		if c.batchOpenLocked(live, capacity) {
			c.held++
			c.mu.Unlock()
			return nil
		}
		wake := c.wake
		c.mu.Unlock()
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-wake:
		case <-tick.C:
		}
	}
}

// BatchRelease returns a decoder BatchAcquire gave, waking its waiters.
func (c *CPU) BatchRelease() {
	c.mu.Lock()
	c.held--
	close(c.wake)
	c.wake = make(chan struct{})
	c.mu.Unlock()
}
