package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer"
)

// ErrNoChooser is NewChooser's error when the request's engine cannot
// score given words (a remote engine, or an embedded pool whose streams
// are not recognizer.Choosers).
var ErrNoChooser = errors.New("pipeline: the engine cannot score given words")

// Chooser scores word sequences on a recording's audio with the pool that
// decodes it as a whole recording (the embedded engine's batch pool of
// its band, as TranscribeFile routes it, gated as the Transcriber's
// engines are). It holds one decoder until Close.
type Chooser struct {
	channels [][]int16
	st       recognizer.Stream
	ch       recognizer.Chooser
}

// NewChooser decodes path and checks out a decoder of the pool
// TranscribeFile would decode it on with p. ErrNoChooser when that
// engine cannot score words.
func (t *Transcriber) NewChooser(ctx context.Context, path string, p *params.PreRecorded) (*Chooser, error) {
	rt, err := t.Engines.Route(p.Model, p.LanguageConfig.Languages, p.LanguageConfig.CodeSwitching)
	if err != nil {
		return nil, err
	}
	if rt.remote != nil || rt.Language == "" {
		return nil, ErrNoChooser
	}
	pcm, err := media.Decode(ctx, path, &t.Media)
	if err != nil {
		return nil, fmt.Errorf("decode audio: %w", err)
	}
	en, _ := t.Engines.forBand(rt.Engine, recognizer.BandOf(pcm.Info.SampleRate, pcm.Channels), true)
	if t.Gate != nil {
		en = t.Gate(en)
	}
	st, err := en.NewStream(ctx, recognizer.StreamOptions{Language: rt.Language})
	if err != nil {
		return nil, err
	}
	ch, ok := st.(recognizer.Chooser)
	if !ok {
		// A gated stream keeps the engine's stream inside it.
		if u, isWrap := st.(interface{ Unwrap() recognizer.Stream }); isWrap {
			ch, ok = u.Unwrap().(recognizer.Chooser)
		}
	}
	if !ok {
		st.Close()
		return nil, ErrNoChooser
	}
	return &Chooser{channels: pcm.Channels, st: st, ch: ch}, nil
}

// Choose scores the alternatives on channel's audio from start to end
// (seconds, clamped to the recording) and returns the index of the best.
func (c *Chooser) Choose(channel int, start, end float64, alternatives [][]string) (int, error) {
	if channel < 0 || channel >= len(c.channels) {
		return -1, fmt.Errorf("pipeline: choose: channel %d of %d", channel, len(c.channels))
	}
	pcm := c.channels[channel]
	a := min(max(int(start*recognizer.SampleRate), 0), len(pcm))
	b := min(max(int(end*recognizer.SampleRate), a), len(pcm))
	return c.ch.Choose(pcm[a:b], alternatives)
}

// Close returns the decoder.
func (c *Chooser) Close() error { return c.st.Close() }
