package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

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
		dir, err := os.MkdirTemp("", "asrbench-"+strings.TrimPrefix(r.encoding, "wav/")+"-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		files := make([]string, len(clips))
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
			up := media.AppendWAVHeader(nil, media.Format{Encoding: media.LinearPCM, BitDepth: 16, SampleRate: recognizer.SampleRate, Channels: 1}, int64(2*len(pcm[0])))
			for _, s := range pcm[0] {
				up = append(up, byte(s), byte(s>>8))
			}
			files[i] = c.File
			if err := os.WriteFile(filepath.Join(dir, c.File), up, 0o600); err != nil {
				return nil, err
			}
		}
		res, err := psbatch.Run(ctx, psbatch.Model{HMM: cfg.HMM, LM: cfg.LM, Dict: cfg.Dict}, dir, files)
		if err != nil {
			return nil, err
		}
		row := row{name: "pocketsphinx_batch stock model (reference), " + r.name + " through earshot's decoder to 16 kHz", wall: res.Wall, cpu: res.CPU}
		for _, c := range clips {
			h, ok := res.Hyps[strings.TrimSuffix(c.File, ".wav")]
			if !ok {
				return nil, fmt.Errorf("pocketsphinx_batch gave no hypothesis for %s (%s)", c.File, r.name)
			}
			addErrors(&row, c.Transcript, h)
		}
		out[r.name] = row
	}
	return out, nil
}
