package main

import (
	"context"
	"fmt"

	"github.com/earshot-dev/earshot/bench/internal/psbatch"
	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/sphinx"
)

// formatOf is the media format of a narrowband rendition's bytes.
func formatOf(r rendition) media.Format {
	enc := media.MuLaw
	if r.tag == 6 {
		enc = media.ALaw
	}
	return media.Format{Encoding: enc, BitDepth: 8, SampleRate: r.rate, Channels: 1}
}

// runStockRenditions decodes every narrowband rendition of the clips with
// Debian's stock model in pocketsphinx_batch: the G.711 bytes a phone would
// send, decoded and resampled to 16 kHz by earshot's own media.Framer (as
// the doors do), written as WAV files. This is the reference the
// telephone-band target compares with (earshot's WER at most 0.7x stock's
// on the same rendition).
func runStockRenditions(ctx context.Context, cfg sphinx.Config, clips []clip) (map[string]row, error) {
	out := map[string]row{}
	for _, r := range renditions {
		if r.rate >= recognizer.SampleRate {
			continue
		}
		pcms := make([][]int16, len(clips))
		for i, c := range clips {
			audio, err := r.audio(c.Path)
			if err != nil {
				return nil, err
			}
			fr, err := media.NewFramer(formatOf(r), recognizer.SampleRate)
			if err != nil {
				return nil, err
			}
			pcm, _ := fr.Push(audio)
			pcms[i] = pcm[0]
		}
		hyps, res, err := psbatch.RunPCM(ctx, psbatch.Model{HMM: cfg.HMM, LM: cfg.LM, Dict: cfg.Dict}, pcms)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.name, err)
		}
		row := row{name: "pocketsphinx_batch stock model (reference), " + r.name + " through earshot's decoder to 16 kHz", wall: res.Wall, cpu: res.CPU}
		for i, c := range clips {
			addErrors(&row, c.Transcript, hyps[i])
		}
		out[r.name] = row
	}
	return out, nil
}
