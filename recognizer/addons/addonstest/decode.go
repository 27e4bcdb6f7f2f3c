package addonstest

import (
	"fmt"

	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
	"github.com/earshot-dev/earshot/recognizer/sphinx"
)

// Transcript is a decoded clip: the engine's utterances and the clip it
// came from (reference text, duration).
type Transcript struct {
	Clip       recognizertest.Clip
	Utterances []recognizer.Utterance
}

// Decode transcribes the named clips of the speech manifest with one
// PocketSphinx engine (one decoder per CPU) through recognizer.Transcribe
// and returns them in the order asked. The engine is closed before it
// returns. The test fails on an unknown clip or a decoding error.
func Decode(t testing.TB, names ...string) []Transcript {
	t.Helper()
	byName := map[string]recognizertest.Clip{}
	for _, c := range recognizertest.Manifest(t) {
		byName[c.File] = c
	}
	cfg := sphinx.Config{}
	cfg.SetDefaults()
	e, err := sphinx.New(cfg, recognizer.NewCPU(cfg.LiveDecodes), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	out := make([]Transcript, len(names))
	g, ctx := errgroup.WithContext(t.Context())
	g.SetLimit(cfg.Decoders) // clips of one segment each would otherwise use one core
	for i, n := range names {
		c, ok := byName[n]
		if !ok {
			t.Fatalf("addonstest: clip %s not in manifest", n)
		}
		pcm := recognizertest.ReadWAV16(t, c.Path)
		g.Go(func() error {
			res, err := recognizer.Transcribe(ctx, e, pcm, recognizer.BatchOptions{})
			if err != nil {
				return fmt.Errorf("addonstest: transcribe %s: %w", n, err)
			}
			out[i] = Transcript{Clip: c, Utterances: res.Utterances}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	return out
}
