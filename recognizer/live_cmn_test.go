package recognizer_test

import (
	"context"
	"slices"
	"testing"

	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/sphinx"
)

// primesSeen is an engine whose streams record the audio their CMN is
// primed from (Stream.SetCMNFrom) and the first audio written to each.
type primesSeen struct {
	*sphinx.Engine
	primes [][]int16
	firsts [][]int16 // each stream's first Write
}

type primeStream struct {
	*sphinx.Stream
	e       *primesSeen
	written bool
}

func (s *primeStream) SetCMNFrom(pcm []int16) {
	s.e.primes = append(s.e.primes, slices.Clone(pcm))
	s.Stream.SetCMNFrom(pcm)
}

func (s *primeStream) Write(pcm []int16) error {
	if !s.written && len(pcm) > 0 {
		s.written = true
		s.e.firsts = append(s.e.firsts, slices.Clone(pcm))
	}
	return s.Stream.Write(pcm)
}

func (e *primesSeen) NewStream(ctx context.Context, o recognizer.StreamOptions) (recognizer.Stream, error) {
	st, err := e.Engine.NewStream(ctx, o)
	if err != nil {
		return nil, err
	}
	return &primeStream{Stream: st.(*sphinx.Stream), e: e}, nil
}

// TestLiveDigitalSilence: a call leg that is digital silence between its
// turns (a SIPREC leg while the other party talks: G.711's idle code,
// exact zeros through mu-law, 8 through A-law) primes each utterance's
// normalisation from its speech and line noise only, not from the silence
// in its pre-roll and pauses, whose cepstrum is the front end's floor
// (issue 41: with it the live finals of SIPREC PCMU calls replayed offline
// were 9 points worse than the same turns without the silence around
// them), and each utterance is decoded from its first frame of signal,
// not from a pre-roll of the idle code, as a batch segment's padding
// stops at digital silence (3 points more on those calls). The turns are
// still transcribed, their words at their times on the session's
// timeline.
func TestLiveDigitalSilence(t *testing.T) {
	t.Parallel()
	_, gf := liveClip(t, "pocketsphinx-goforward.wav")
	frame := recognizer.SampleRate / 100
	turn := gf[0][:len(gf[0])/frame*frame] // silence and speech meet at frame edges
	// The idle code of mu-law decodes to 0, A-law's to 8.
	for _, idle := range []int16{0, 8} {
		quiet := make([]int16, recognizer.SampleRate) // the other party's turn
		for i := range quiet {
			quiet[i] = idle
		}
		pcm := cat(quiet, turn, quiet, turn, quiet)
		e := &primesSeen{Engine: liveEngine(t, 1)}
		evs := runLive(t, e, recognizer.LiveConfig{Endpointing: params.DefaultEndpointing()}, [][]int16{pcm})
		if got, want := finals(evs, 0), "go forward ten meters go forward ten meters"; got != want {
			t.Errorf("idle %d: finals %q, want %q", idle, got, want)
		}
		if len(e.primes) < 2 || len(e.firsts) < 2 {
			t.Fatalf("idle %d: %d streams primed and %d written, want one per turn", idle, len(e.primes), len(e.firsts))
		}
		for i, w := range e.firsts {
			if idleStart := !slices.ContainsFunc(w[:min(frame, len(w))], func(v int16) bool { return v != idle }); idleStart {
				t.Errorf("idle %d: stream %d's audio starts with 10 ms of digital silence", idle, i)
			}
		}
		// The turns are at 1 s and at 2 s plus the clip's length.
		firstEnd := float64(len(quiet)+len(turn)) / recognizer.SampleRate
		second := float64(2*len(quiet)+len(turn)) / recognizer.SampleRate
		for _, ev := range evs {
			for _, w := range ev.Utterance.Words {
				if ev.Kind == recognizer.EventFinal && (w.Start < 1 || w.End > firstEnd && w.Start < second) {
					t.Errorf("idle %d: %q at %.2f-%.2f s, outside the turns", idle, w.Word, w.Start, w.End)
				}
			}
		}
		for i, p := range e.primes {
			for k := 0; k+frame <= len(p); k++ {
				if !slices.ContainsFunc(p[k:k+frame], func(v int16) bool { return v != idle }) {
					t.Errorf("idle %d: stream %d primed from %.2f s of audio with 10 ms of digital silence at %.2f s",
						idle, i, float64(len(p))/recognizer.SampleRate, float64(k)/recognizer.SampleRate)
					break
				}
			}
		}
	}
}
