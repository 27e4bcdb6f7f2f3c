package live

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/earshot-dev/earshot/recognizer"
)

// GatePoll is how often a batch pass waiting for decoders looks again at
// the live sessions (sessions come and go without telling it); a worker
// that left a pass queued for the gate looks again this often.
const GatePoll = 100 * time.Millisecond

// batchGate keeps batch passes below live audio in priority, by the
// process's CPU policy (recognizer.CPU: at most one decoder for batch
// passes while any live session exists). It tells the policy what the live
// sessions could need: live streams decode on pools of their own, except
// calls when no telephone model is installed: those share the wideband
// pool with batch passes, so a pass then takes a decoder only when every
// channel of every live session (connected or still to connect) could hold
// one at the same time as the passes do. Remote engines are not gated:
// their capacity is not ours.
type batchGate struct {
	s   *Service
	cpu *recognizer.CPU
}

func newBatchGate(s *Service, cpu *recognizer.CPU) *batchGate { return &batchGate{s: s, cpu: cpu} }

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

// demand is what the policy weighs a batch pass against.
func (g *batchGate) demand() (live, capacity int) { return g.liveChannels(), g.capacity() }

// open reports whether a batch pass could start decoding now (workers
// claim a pass only then, so a closed gate does not hold a worker that a
// pre-recorded job could use).
func (g *batchGate) open() bool { return g.cpu.BatchOpen(g.demand()) }

// wholeDecoder is a stream that decodes a whole segment in one call
// (sphinx: batch normalisation over it), as a batch pass and a revision
// decode when they can.
type wholeDecoder interface {
	Decode(pcm []int16) (recognizer.Utterance, error)
}

// acquire waits until the gate lets one more decoder go to a batch pass.
func (g *batchGate) acquire(ctx context.Context) error {
	return g.cpu.BatchAcquire(ctx, GatePoll, g.demand)
}

func (g *batchGate) release() { g.cpu.BatchRelease() }

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
	if wd, ok := st.(wholeDecoder); ok {
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

// Unwrap is the engine's stream (pipeline.NewChooser scores words on it).
func (s *gatedStream) Unwrap() recognizer.Stream { return s.Stream }

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

// Decode runs on a thread below the live decodes in priority
// (recognizer.CPU.BatchDecode).
func (s gatedWholeStream) Decode(pcm []int16) (u recognizer.Utterance, err error) {
	s.g.cpu.BatchDecode(func() { u, err = s.decode(pcm) })
	return u, err
}

// BatchPassOpen reports whether a batch pass could start decoding now:
// workers claim a pass only then, so a closed gate does not hold a worker
// that a pre-recorded job could use.
func (s *Service) BatchPassOpen() bool { return s.gate.open() }
