package live

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/earshot-dev/earshot/recognizer"
)

// GatePoll is how often a batch pass waiting for decoders looks again at
// the live sessions (sessions come and go without telling it); a worker
// that left a pass queued for the gate looks again this often.
const GatePoll = 100 * time.Millisecond

// batchGate keeps batch passes below live audio in priority. While any
// live session exists, at most one segment of batch passes decodes at a
// time (one core for live audio on a 2-core box). Live streams decode on
// pools of their own, except calls when no telephone model is installed:
// those share the wideband pool with batch passes, so a pass then takes a
// decoder only when every channel of every live session (connected or
// still to connect) could hold one at the same time as the passes do.
// Remote engines are not gated: their capacity is not ours.
type batchGate struct {
	s *Service

	mu   sync.Mutex
	held int           // guarded by mu: decoders held by batch passes
	wake chan struct{} // guarded by mu: closed and replaced when held drops
}

func newBatchGate(s *Service) *batchGate { return &batchGate{s: s, wake: make(chan struct{})} }

// liveChannels is how many decoders the live sessions could need at once.
func (g *batchGate) liveChannels() int {
	g.s.mu.Lock()
	defer g.s.mu.Unlock()
	n := 0
	for _, sess := range g.s.sessions {
		n += sess.p.Channels
	}
	return n
}

// capacity is how many decoders batch passes and live channels share:
// the wideband pool's when live calls decode on it (no telephone model),
// else no bound (live audio has pools of its own).
func (g *batchGate) capacity() int {
	if g.s.pl.TelephoneModel() != "" {
		return math.MaxInt
	}
	return g.s.deps.Decoders
}

// openLocked reports whether a batch pass may take one more decoder with
// live channels running.
func (g *batchGate) openLocked(live int) bool {
	limit := runtime.NumCPU()
	if live > 0 {
		limit = 1
	}
	return g.held < limit && g.held+live < g.capacity()
}

// open reports whether a batch pass could start decoding now (workers
// claim a pass only then, so a closed gate does not hold a worker that a
// pre-recorded job could use).
func (g *batchGate) open() bool {
	live := g.liveChannels()
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.openLocked(live)
}

// acquire waits until the gate lets one more decoder go to a batch pass.
func (g *batchGate) acquire(ctx context.Context) error {
	tick := time.NewTicker(GatePoll)
	defer tick.Stop()
	for {
		live := g.liveChannels()
		g.mu.Lock()
		if g.openLocked(live) {
			g.held++
			g.mu.Unlock()
			return nil
		}
		wake := g.wake
		g.mu.Unlock()
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-wake:
		case <-tick.C:
		}
	}
}

func (g *batchGate) release() {
	g.mu.Lock()
	g.held--
	close(g.wake)
	g.wake = make(chan struct{})
	g.mu.Unlock()
}

// wrap gates e's streams; the pipeline calls it on embedded engines only
// (pipeline.Transcriber.Gate), remote ones are not ours to gate.
func (g *batchGate) wrap(e recognizer.Engine) recognizer.Engine {
	return gatedEngine{Engine: e, g: g}
}

type gatedEngine struct {
	recognizer.Engine
	g *batchGate
}

func (e gatedEngine) NewStream(ctx context.Context, o recognizer.StreamOptions) (recognizer.Stream, error) {
	if err := e.g.acquire(ctx); err != nil {
		return nil, fmt.Errorf("batch pass: wait for a decoder: %w", err)
	}
	st, err := e.Engine.NewStream(ctx, o)
	if err != nil {
		e.g.release()
		return nil, err
	}
	gs := &gatedStream{Stream: st, g: e.g}
	if wd, ok := st.(interface {
		Decode([]int16) (recognizer.Utterance, error)
	}); ok {
		return gatedWholeStream{gatedStream: gs, decode: wd.Decode}, nil
	}
	return gs, nil
}

// gatedStream returns its gate share on Close.
type gatedStream struct {
	recognizer.Stream
	g    *batchGate
	once sync.Once
}

func (s *gatedStream) Close() error {
	err := s.Stream.Close()
	s.once.Do(s.g.release)
	return err
}

// gatedWholeStream keeps the one-pass Decode of the stream it wraps
// (recognizer.Transcribe prefers it).
type gatedWholeStream struct {
	*gatedStream
	decode func([]int16) (recognizer.Utterance, error)
}

func (s gatedWholeStream) Decode(pcm []int16) (recognizer.Utterance, error) { return s.decode(pcm) }

// BatchPassOpen reports whether a batch pass could start decoding now:
// workers claim a pass only then, so a closed gate does not hold a worker
// that a pre-recorded job could use.
func (s *Service) BatchPassOpen() bool { return s.gate.open() }
