package recognizer_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/params"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
	"github.com/earshot-dev/earshot/recognizer/sphinx"
)

// liveChunk is what the doors deliver at a time: 20 ms of 16 kHz audio.
const liveChunk = recognizer.SampleRate / 50

// liveEngine is the wideband model's live pool of the given size
// (sphinx.NewLive), where the daemon decodes live streams of wideband
// audio: first-pass-only decoders at the first-pass cap.
func liveEngine(t testing.TB, decoders int) *sphinx.Engine {
	t.Helper()
	cfg := sphinx.Config{Decoders: decoders, LiveDecoders: decoders}
	cfg.SetDefaults()
	e, err := sphinx.NewLive(cfg, recognizer.NewCPU(cfg.LiveDecodes), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// liveClip returns a clip of the shared speech set and its channels.
func liveClip(t testing.TB, file string) (recognizertest.Clip, [][]int16) {
	t.Helper()
	for _, c := range recognizertest.Manifest(t) {
		if c.File == file {
			return c, recognizertest.ReadWAV16(t, c.Path)
		}
	}
	t.Fatalf("clip %s not in manifest", file)
	return recognizertest.Clip{}, nil
}

// liveHiss is n samples of seeded white noise with the given RMS.
func liveHiss(n int, rms float64, seed uint64) []int16 {
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([]int16, n)
	for i := range out {
		out[i] = int16(max(-32768, min(32767, r.NormFloat64()*rms)))
	}
	return out
}

func cat(parts ...[]int16) []int16 {
	var out []int16
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// streamLive writes pcm to l in 20 ms chunks, as a door would.
func streamLive(t testing.TB, l *recognizer.Live, pcm [][]int16) {
	t.Helper()
	for i := 0; i < len(pcm[0]); i += liveChunk {
		chunk := make([][]int16, len(pcm))
		for c := range pcm {
			chunk[c] = pcm[c][i:min(i+liveChunk, len(pcm[c]))]
		}
		if err := l.Write(t.Context(), chunk); err != nil {
			t.Fatal(err)
		}
	}
}

// runLive streams pcm through a new Live, flushes and closes it, checks
// the event invariants and returns the events.
func runLive(t testing.TB, e recognizer.Engine, cfg recognizer.LiveConfig, pcm [][]int16) []recognizer.Event {
	t.Helper()
	cfg.Channels = len(pcm)
	l, evs := newLive(t, e, cfg)
	streamLive(t, l, pcm)
	if err := l.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	seconds := float64(len(pcm[0])) / recognizer.SampleRate
	if d := l.Duration(); d != seconds {
		t.Errorf("Duration %.3f, want %.3f", d, seconds)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	checkEvents(t, *evs, cfg.Channels, seconds)
	return *evs
}

// newLive makes a Live on e with cfg whose events are appended, in order,
// to the slice it returns a pointer to.
func newLive(t testing.TB, e recognizer.Engine, cfg recognizer.LiveConfig) (*recognizer.Live, *[]recognizer.Event) {
	t.Helper()
	evs := new([]recognizer.Event)
	l, err := recognizer.NewLive(e, cfg, func(ev recognizer.Event) { *evs = append(*evs, ev) })
	if err != nil {
		t.Fatal(err)
	}
	return l, evs
}

// endpointing is a session's endpointing as params would have decoded it.
func endpointing(silence, maxUtterance time.Duration) params.Endpointing {
	return params.Endpointing{Silence: params.Seconds(silence), MaxUtterance: params.Seconds(maxUtterance)}
}
