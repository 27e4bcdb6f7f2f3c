package sphinx

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// A decodeGate lets at most n live decodes run at once. Live streams
// decode in short blocks (writeBlock) and the lattice pass at a segment's
// end; with more decoders than CPUs running C code at once, the kernel
// time-slices them every few milliseconds and each slice starts on CPU
// caches the other decoders filled, so every decode gets dearer just when
// the box is short of CPU: 8 narrowband calls on a 2-CPU VM at
// PocketSphinx's own search settings cost 0.22 to 0.26 CPU s per
// call-second without a gate, 0.15 with one (docs/live-tuning.md, the log of
// 2026-11-28). A block waits for a free CPU instead and then runs to its end.
// Whole recordings (Stream.Decode) are not gated: the batch gate of
// daemon/live keeps them to one CPU while calls are live, and a pass holding
// a slot for seconds would starve the calls.
type decodeGate struct {
	slots chan struct{} // one token per decode inside the gate
	// peak is the most decodes inside the gate at once since it was made
	// (for tests).
	peak atomic.Int32
}

var (
	gatesMu sync.Mutex
	gates   = map[int]*decodeGate{} // guarded by gatesMu; by limit
)

// gateOf returns the process's gate for cfg.LiveDecodes (every Engine of
// the process with the same setting shares it, as they share the CPUs),
// or nil for no limit.
func gateOf(cfg Config) *decodeGate {
	n := cfg.LiveDecodes
	switch {
	case n < 0:
		return nil
	case n == 0:
		n = runtime.GOMAXPROCS(0)
	}
	gatesMu.Lock()
	defer gatesMu.Unlock()
	g := gates[n]
	if g == nil {
		g = &decodeGate{slots: make(chan struct{}, n)}
		gates[n] = g
	}
	return g
}

// do runs f inside the gate (at once on a nil gate).
func (g *decodeGate) do(f func()) {
	if g == nil {
		f()
		return
	}
	g.slots <- struct{}{}
	defer func() { <-g.slots }()
	n := int32(len(g.slots))
	for p := g.peak.Load(); n > p && !g.peak.CompareAndSwap(p, n); p = g.peak.Load() {
	}
	f()
}
