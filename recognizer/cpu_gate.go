package recognizer

import "sync"

// liveGate is the live decodes' slots (CPU.LiveDecode, CPU.LiveRead): at
// most slots decodes inside at once; a freed slot goes to the oldest
// waiting read, else to the oldest waiting block, each in the order they
// came.
type liveGate struct {
	slots int

	mu     sync.Mutex
	inside int             // guarded by mu: decodes holding a slot
	reads  []chan struct{} // guarded by mu: waiting reads, oldest first
	blocks []chan struct{} // guarded by mu: waiting blocks, oldest first
}

// acquire waits for a slot and returns how many decodes are inside with
// it.
func (g *liveGate) acquire(read bool) int32 {
	g.mu.Lock()
	if g.inside < g.slots && len(g.reads) == 0 && (read || len(g.blocks) == 0) {
		g.inside++
		n := g.inside
		g.mu.Unlock()
		return int32(n)
	}
	wake := make(chan struct{})
	if read {
		g.reads = append(g.reads, wake)
	} else {
		g.blocks = append(g.blocks, wake)
	}
	g.mu.Unlock()
	<-wake // release handed its slot over: inside counts this decode
	g.mu.Lock()
	n := g.inside
	g.mu.Unlock()
	return int32(n)
}

// release frees a slot, handing it to the next waiter.
func (g *liveGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	var next chan struct{}
	switch {
	case len(g.reads) > 0:
		next, g.reads = g.reads[0], g.reads[1:]
	case len(g.blocks) > 0:
		next, g.blocks = g.blocks[0], g.blocks[1:]
	default:
		g.inside--
		return
	}
	close(next) // the slot passes on: inside stays
}
