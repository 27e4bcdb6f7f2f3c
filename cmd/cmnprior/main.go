// Command cmnprior writes an acoustic model's CMN prior (`make cmn-prior`):
// the mean cepstrum of the corpus's adaptation speech as the decoder's own
// front end computes it, which a live session's first normalisation starts
// from (sphinx.CMNPriorFile; docs/live-tuning.md, 2026-11-24). For the
// telephone-band model the speech is first rendered to 8 kHz G.711 (mu-law
// and A-law) and back through earshot's own resampler and G.711 decoder, as
// the doors hand it to the decoder.
//
// Data: the train-clean-100 readers (the telephone model's adaptation
// speakers) outside livegap's tuning subset (every -every'th manifest row);
// the test-other readers, held out for reporting, are never read. Each file
// is cut into the pre-recorded path's VAD segments and the prior is the
// frame-weighted mean over all of them.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/sphinx"
	"github.com/earshot-dev/earshot/recognizer/sphinx/telmodel"
)

func main() {
	corpus := flag.String("corpus", "../shared/corpus", "adaptation corpus (manifest.tsv, FLAC)")
	every := flag.Int("every", 15, "livegap's tuning subset (every Nth manifest row), left out")
	hmm := flag.String("hmm", sphinx.DefaultHMM, "acoustic model whose front end computes the cepstra")
	telephone := flag.Bool("telephone", false, "render the speech through G.711 (mu-law and A-law) first")
	out := flag.String("out", "", "prior file to write (default: stdout)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *corpus, *every, *hmm, *telephone, *out); err != nil {
		slog.Error("cmnprior", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, corpus string, every int, hmm string, telephone bool, out string) error {
	files, err := adaptationFiles(corpus, every)
	if err != nil {
		return err
	}
	cfg := sphinx.Config{HMM: hmm, Decoders: 1, TelephoneHMM: sphinx.NoTelephoneHMM}
	cfg.SetDefaults()
	e, err := sphinx.New(cfg, nil)
	if err != nil {
		return err
	}
	defer e.Close()
	var vad recognizer.VADConfig
	vad.SetDefaults()
	var sum []float64
	frames := 0
	for _, f := range files {
		p, err := media.Decode(ctx, filepath.Join(corpus, f), nil)
		if err != nil {
			return err
		}
		if len(p.Channels) != 1 {
			return fmt.Errorf("%s: %d channels, want 1", f, len(p.Channels))
		}
		versions := [][]int16{p.Channels[0]}
		if telephone {
			versions = nil
			for _, law := range telmodel.Laws {
				pcm, err := g711RoundTrip(p.Channels[0], law)
				if err != nil {
					return fmt.Errorf("%s: %w", f, err)
				}
				versions = append(versions, pcm)
			}
		}
		for _, pcm := range versions {
			for _, sp := range recognizer.Segment(pcm, vad) {
				mean, n, err := e.CepstralMean(ctx, pcm[sp.Start:sp.End])
				if err != nil {
					return fmt.Errorf("%s: %w", f, err)
				}
				if sum == nil {
					sum = make([]float64, len(mean))
				}
				for j, x := range mean {
					sum[j] += x * float64(n)
				}
				frames += n
			}
		}
	}
	if frames == 0 {
		return fmt.Errorf("no speech in %d files", len(files))
	}
	for j := range sum {
		sum[j] /= float64(frames)
	}
	what := "16 kHz PCM"
	if telephone {
		what = "G.711 mu-law and A-law renditions (earshot's resampler and G.711 path)"
	}
	b := sphinx.FormatCMNPrior(sum,
		"CMN prior: mean cepstrum of the adaptation speech as this model's front end computes it (cmd/cmnprior, make cmn-prior).",
		fmt.Sprintf("%d corpus train-clean-100 files outside the tuning subset (every %dth row), %s, %d frames in VAD segments.", len(files), every, what, frames))
	if out == "" {
		_, err := os.Stdout.Write(b)
		return err
	}
	return os.WriteFile(out, b, 0o644)
}

// adaptationFiles lists the corpus's train-clean-100 files outside the
// tuning subset, in manifest order.
func adaptationFiles(corpus string, every int) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(corpus, "manifest.tsv"))
	if err != nil {
		return nil, err
	}
	var out []string
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
		f := strings.SplitN(line, "\t", 2)
		if i%max(every, 1) == 0 || !strings.HasPrefix(f[0], "ls-train-clean-100-") {
			continue
		}
		out = append(out, f[0])
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no adaptation files in %s", corpus)
	}
	return out, nil
}

// g711RoundTrip is pcm (16 kHz) as the decoder receives it from a G.711
// call: resampled to 8 kHz and companded with law (telmodel.EncodeG711),
// then decoded and resampled back by media.Framer, as the doors do.
func g711RoundTrip(pcm []int16, law telmodel.Law) ([]int16, error) {
	g, err := telmodel.EncodeG711(pcm, media.OutputRate, law)
	if err != nil {
		return nil, err
	}
	f := media.Format{Encoding: media.MuLaw, BitDepth: 8, SampleRate: telmodel.TelephoneRate, Channels: 1}
	if law == telmodel.ALaw {
		f.Encoding = media.ALaw
	}
	fr, err := media.NewFramer(f, recognizer.SampleRate)
	if err != nil {
		return nil, err
	}
	out, _ := fr.Push(g)
	pcm = append([]int16(nil), out[0]...)
	return append(pcm, fr.Flush()[0]...), nil
}
