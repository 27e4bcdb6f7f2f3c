// Command mllrbench measures whether unsupervised speaker adaptation per
// call channel would improve the batch pass (issue 41): for each group of
// one speaker's utterances (the speech of one call leg, about -group
// seconds), it decodes the group through G.711 mu-law with the telephone
// model and the batch pool's search (the first pass of the call), takes
// those hypotheses as transcripts for sphinxtrain's bw (Baum-Welch
// statistics under the telephone model) and mllr_solve (one global MLLR
// transform of the means), decodes the group again with the transform
// (PocketSphinx -mllr) and scores both decodes. The transform is estimated
// from the group itself only, as one call would.
//
//	go run ./bench/cmd/mllrbench [-corpus DIR] [-testdata DIR] [-group 30s] [-modes unsup,conf,sup]
//
// Modes: unsup (the first pass's hypotheses of every utterance), conf (only
// the runs of at least two consecutive words whose posterior is at least
// -min-conf, each cut out of its utterance with its own features), live
// (the hypotheses of an approximation of the live pool's search, liveArgs:
// a call's live finals, which the daemon has already, so the adapted
// decode would be the batch pass's only one), sup
// (the reference transcripts: an upper bound of what any transcript could
// give, not something a call has). Speakers: the corpus's held-out
// test-other readers (all 10 utterances of each of the 10; none of them in
// the telephone model's adaptation) and, as a second check, the developer
// test set's mono clips grouped by speaker.
//
// Decodes are pocketsphinx_batch runs with the batch pool's settings
// (sphinx.Config.TelephoneBatch: -fwdflat no, -topn 4, -maxhmmpf 5000, -lw
// 6.5, -remove_silence no; Debian's LM and dictionary), one utterance at a
// time with its own cepstral mean as the batch pass's segments. CPU is each
// tool's user+system time (getrusage of the child); a decode's CPU is
// pocketsphinx_batch's own TOTAL line (without loading the model, which
// the daemon's pool does once).
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
	"slices"
	"strings"
	"time"
)

func main() {
	var o options
	flag.StringVar(&o.corpus, "corpus", "../shared/corpus", "corpus directory (manifest.tsv, FLAC): its test-other readers are measured")
	flag.StringVar(&o.testdata, "testdata", "../shared/testdata/speech", "developer test set (manifest.tsv, WAV); empty: skip")
	flag.StringVar(&o.hmm, "hmm", "model/en-us-telephone", "telephone-band acoustic model")
	flag.StringVar(&o.base, "base", "/usr/share/pocketsphinx/model/en-us/en-us", "Debian's en-us model (sendump, mdef, transition matrices)")
	flag.StringVar(&o.dict, "dict", "/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict", "pronunciation dictionary")
	flag.StringVar(&o.lm, "lm", "/usr/share/pocketsphinx/model/en-us/en-us.lm.bin", "language model")
	flag.StringVar(&o.sphinxtrain, "sphinxtrain", "/usr/lib/sphinxtrain", "directory of bw and mllr_solve")
	flag.StringVar(&o.scratch, "scratch", filepath.Join(os.TempDir(), "earshot-mllrbench"), "work directory")
	flag.DurationVar(&o.group, "group", 30*time.Second, "speech per group (a call leg): a group closes once it has this much; a last group under half of it joins the one before")
	flag.StringVar(&o.modes, "modes", "unsup,sup", "adaptations: unsup, conf, live, sup")
	flag.Float64Var(&o.minConf, "min-conf", 0.8, "conf mode: least posterior of a word adapted on")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, &o); err != nil {
		slog.Error("mllrbench", "err", err)
		os.Exit(1)
	}
}

type options struct {
	corpus, testdata, hmm, base, dict, lm, sphinxtrain, scratch, modes string
	group                                                              time.Duration
	minConf                                                            float64
}

func run(ctx context.Context, o *options) error {
	for _, p := range []*string{&o.corpus, &o.hmm, &o.scratch} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			return err
		}
		*p = abs
	}
	modes := strings.Split(o.modes, ",")
	for _, m := range modes {
		if !slices.Contains([]string{"unsup", "conf", "live", "sup"}, m) {
			return fmt.Errorf("unknown mode %q", m)
		}
	}
	if err := os.RemoveAll(filepath.Join(o.scratch, "run")); err != nil {
		return err
	}
	sets, err := loadSets(o)
	if err != nil {
		return err
	}
	var all []utt
	for _, s := range sets {
		for _, g := range s.groups {
			all = append(all, g.utts...)
		}
	}
	t := &toolbox{o: o}
	if err := t.prepare(ctx, all); err != nil {
		return err
	}
	fmt.Printf("mllrbench %s: %d utterances; %d CPUs, %s; load average before: %s\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), len(all), runtime.NumCPU(), runtime.Version(), loadAvg())
	fmt.Printf("features (sphinx_fe): %.4f CPU s per audio s\n\n", t.feCPU/t.audio(all))

	// The first pass: every utterance once, as the batch pass decodes it.
	first, err := t.decode(ctx, "first", all)
	if err != nil {
		return err
	}
	var live decoded
	if slices.Contains(modes, "live") {
		if live, err = t.decode(ctx, "live", all, liveArgs...); err != nil {
			return err
		}
		fmt.Printf("live search (approximation: -lw 7, -cmn live): WER %.1f%%, %.3f CPU s per audio s\n\n", live.score(all).wer(), live.cpu/t.audio(all))
	}
	fmt.Printf("first pass (batch decode): %.3f CPU s per audio s (%.1f s over %.1f s)\n\n", first.cpu/t.audio(all), first.cpu, t.audio(all))

	var rows []row
	for _, s := range sets {
		n := 0 // the group's number within its speaker's
		for gi, g := range s.groups {
			if gi == 0 || s.groups[gi-1].speaker != g.speaker {
				n = 0
			}
			n++
			r := row{set: s.name, speaker: g.speaker, group: n, utts: len(g.utts), seconds: t.audio(g.utts),
				base: first.score(g.utts), modes: map[string]outcome{}}
			for _, m := range modes {
				oc, err := t.adapt(ctx, fmt.Sprintf("%s-%s-%d", m, g.speaker, n), m, g.utts, first, live)
				if err != nil {
					return err
				}
				r.modes[m] = oc
			}
			rows = append(rows, r)
			printRow(r, modes)
		}
	}
	fmt.Println()
	report(rows, modes, o, first.cpu, t.feCPU)
	return nil
}

// loadAvg is /proc/loadavg's first three fields.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
