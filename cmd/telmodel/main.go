// Command telmodel builds earshot's telephone-band acoustic model (`make
// model`): it adapts Debian's en-us PocketSphinx model to G.711 audio with
// sphinxtrain, measures stock and adapted models on held-out speakers, picks
// the best adaptation by measurement and writes its means and variances to
// the model directory and a dated report to bench/MODEL.md.
//
// Data: the train-clean-100 readers of the adaptation corpus are adapted on;
// its test-other readers (no speaker in common) and the developer test set
// are only measured. Every recording is rendered to 8 kHz mu-law and A-law
// and back to the decoder's 16 kHz through earshot's own resampler and G.711
// decoder (package telmodel), so features match what the doors produce.
//
// Work files live in -scratch: the renditions and features are reused when
// present (the inputs decide them), the accumulators, candidate models and
// decodes are made again on every run.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"

	"github.com/earshot-dev/earshot/recognizer/sphinx/telmodel"
)

func main() {
	var o options
	flag.StringVar(&o.corpus, "corpus", "../shared/corpus", "adaptation corpus (manifest.tsv, FLAC)")
	flag.StringVar(&o.testdata, "testdata", "../shared/testdata/speech", "developer test set (manifest.tsv, WAV), measured only")
	flag.StringVar(&o.base, "base", "/usr/share/pocketsphinx/model/en-us/en-us", "Debian's en-us acoustic model")
	flag.StringVar(&o.dict, "dict", "/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict", "pronunciation dictionary")
	flag.StringVar(&o.lm, "lm", "/usr/share/pocketsphinx/model/en-us/en-us.lm.bin", "language model for the measurements")
	flag.StringVar(&o.sphinxtrain, "sphinxtrain", "/usr/lib/sphinxtrain", "directory of bw, mllr_solve, map_adapt, mllr_transform")
	flag.StringVar(&o.scratch, "scratch", filepath.Join(os.TempDir(), "earshot-telmodel"), "work directory (reused between runs)")
	flag.StringVar(&o.out, "out", "model/en-us-telephone", "model directory the chosen means and variances go to")
	flag.StringVar(&o.report, "report", "bench/MODEL.md", "markdown report")
	flag.IntVar(&o.jobs, "jobs", min(2, runtime.NumCPU()), "parallel tool runs")
	flag.StringVar(&o.method, "method", "", "use this adaptation (mllr, map, mllr+map) instead of the best measured")
	flag.IntVar(&o.perReader, "held-per-reader", 10, "held-out utterances measured per test-other reader (1..10; fewer on a busy box)")
	flag.BoolVar(&o.measure, "measure", true, "measure the candidates (false: install -method without measuring, no report)")
	flag.BoolVar(&o.reuse, "reuse", false, "keep the accumulators and decodes of the last run (development only)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, &o); err != nil {
		slog.Error("telmodel", "err", err)
		os.Exit(1)
	}
}

type options struct {
	corpus, testdata, base, dict, lm, sphinxtrain string
	scratch, out, report, method                  string
	jobs, perReader                               int
	reuse, measure                                bool
}

func run(ctx context.Context, o *options) error {
	for _, p := range []*string{&o.corpus, &o.testdata, &o.scratch, &o.out, &o.report} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			return err
		}
		*p = abs
	}
	if err := os.MkdirAll(o.scratch, 0o755); err != nil {
		return err
	}
	// Renditions and features depend only on the inputs and are reused;
	// everything from the adaptation on is redone.
	for _, d := range []string{"accum", "models", "hyp", "base"} {
		if o.reuse {
			break
		}
		if err := os.RemoveAll(filepath.Join(o.scratch, d)); err != nil {
			return err
		}
	}
	corpus, err := loadCorpus(o.corpus)
	if err != nil {
		return err
	}
	tests, err := loadTestdata(o.testdata)
	if err != nil {
		return err
	}
	slog.Info("rendering G.711", "corpus", len(corpus), "testdata", len(tests))
	if err := render(ctx, o, telmodel.Variants, corpus); err != nil {
		return err
	}
	if err := render(ctx, o, laws(), tests); err != nil {
		return err
	}
	dict, err := loadDict(o.dict)
	if err != nil {
		return err
	}
	train, held := split(corpus)
	extra := extraWords(train, dict)
	train, dropped := inVocabulary(train, dict, extra)
	slog.Info("features", "train", len(train), "guessed_words", len(extra), "dropped", len(dropped), "held_out", len(held))
	if err := features(ctx, o, train); err != nil {
		return err
	}
	b := &builder{o: o, train: train, extra: extra}
	models, err := b.adapt(ctx)
	if err != nil {
		return err
	}
	if !o.measure {
		if o.method == "" {
			return fatalf("-measure=false needs -method")
		}
		return install(o, models, o.method)
	}
	res, err := measure(ctx, o, models, perReader(held, o.perReader), tests)
	if err != nil {
		return err
	}
	chosen := o.method
	if chosen == "" {
		chosen = best(res, models)
	}
	slog.Info("chosen", "method", chosen)
	if err := install(o, models, chosen); err != nil {
		return err
	}
	return writeReport(o, res, models, chosen, len(train), len(extra), dropped)
}

// fatalf is for invariants the inputs break (a missing hypothesis).
func fatalf(format string, a ...any) error { return fmt.Errorf("telmodel: "+format, a...) }

// laws are the renditions the candidates are measured on: each law through
// the Magnitude encoder (earshot's own, as the benchmarks render).
func laws() []telmodel.Variant {
	vs := make([]telmodel.Variant, len(telmodel.Laws))
	for i, law := range telmodel.Laws {
		vs[i] = telmodel.Variant{Law: law}
	}
	return vs
}
