// Command livegap measures, in process, how far live finals are from a
// batch decode of the same audio, and what each engine preset costs: for
// every rendition (16 kHz PCM, G.711 mu-law 8 kHz) and every named preset
// of the PocketSphinx search, it runs recognizer.Transcribe (the
// pre-recorded path) and recognizer.Live (the live path, default session
// settings, 20 ms writes as fast as they go) over the same clips and prints
// the WER of each and the CPU per audio second of each (the decoding
// thread's getrusage; the presets take turns on each clip, so a passing
// load on a shared machine weighs on all of them alike).
//
//	go run ./bench/cmd/livegap [-speech DIR] [-presets default,fast] [-renditions pcm16k,mulaw8k]
//
// With -corpus DIR it runs on a fixed tuning subset of shared/corpus
// instead (every -every'th utterance of the manifest), the set the live
// path is tuned on; testdata is for reporting. -held-out with -corpus
// reports on corpus speakers held out of the telephone model's adaptation
// (test-other), on utterances outside the tuning subset. -stock adds Debian's
// stock model in pocketsphinx_batch on the same samples, the reference of
// the telephone-band target. -phases K decodes every clip K times, each
// time framed a K-th of a 10 ms frame later. -revised adds the revised
// finals (each live decoder segment decoded again at its end on the batch
// pool, replacing its finals: the daemon's receive_revised_transcripts)
// and their CPU.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/earshot-dev/earshot/bench/internal/benchd"
	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/pipeline"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
	"github.com/earshot-dev/earshot/recognizer/sphinx"
	"github.com/earshot-dev/earshot/transcript"
)

func main() {
	speech := flag.String("speech", "", "speech test set (default: shared/testdata/speech found above the working directory)")
	corpus := flag.String("corpus", "", "run on the tuning subset of this corpus directory instead of -speech")
	every := flag.Int("every", 10, "with -corpus: take every Nth utterance of the manifest")
	flag.BoolVar(&heldOut, "held-out", false, "with -corpus: the test-other readers' utterances outside the tuning subset (every third of them), for reporting")
	presets := flag.String("presets", "default", "engine presets to run, comma separated: "+strings.Join(sphinx.PresetNames(), ", "))
	rends := flag.String("renditions", "pcm16k,mulaw8k", "renditions: pcm16k, mulaw8k, alaw8k (ffmpeg's G.711 encoder), g722 (ffmpeg's G.722 encoder and decoder), mulaw8k-mag, alaw8k-mag (the Magnitude encoder, as asrbench)")
	workers := flag.Int("workers", runtime.NumCPU(), "clips decoded at once")
	flag.BoolVar(&batch, "batch", true, "also decode every clip with the batch path (false: the live path only, for tuning it)")
	flag.BoolVar(&warmChannel, "warm-channel", false, "diagnosis: run each clip through the live session once before the pass that is scored, so the scored pass starts on a channel that has spoken (its normalisation history full)")
	flag.StringVar(&telephoneModel, "telephone-model", benchd.TelephoneModel, "telephone-band acoustic model for the 8 kHz renditions")
	flag.BoolVar(&onePass, "narrow-one-pass", false, "narrowband live finals in one pass at each endpoint (LiveConfig.OnePassFinals)")
	flag.DurationVar(&endpointing, "endpointing", 0, "the sessions' endpointing (the silence of LiveConfig.Endpointing; 0: params.DefaultSilence)")
	flag.BoolVar(&stock, "stock", false, "also decode every rendition with Debian's stock model in pocketsphinx_batch and print the batch path's WER against it")
	flag.BoolVar(&revised, "revised", false, "also score the revised finals (issue 41): each live decoder segment decoded again at its end on the batch pool, replacing its finals (receive_revised_transcripts)")
	flag.IntVar(&phases, "phases", 1, "decode every clip at this many frame phases: the clip without its first 0, 1/K, 2/K ... of a 10 ms frame (PocketSphinx's words move with the phase; bench/CALLS.md 2026-11-30), all of them scored")
	flag.BoolVar(&record, "record", false, "also score the stored record of a live session (issue 41): the live finals or the batch segments, stretch by stretch, whichever the batch engine scores higher (pipeline.CombineUtterances)")
	flag.Parse()
	if err := run(*speech, *corpus, *every, *presets, *rends, *workers); err != nil {
		fmt.Fprintln(os.Stderr, "livegap:", err)
		os.Exit(1)
	}
}

// onePass sets LiveConfig.OnePassFinals for the narrowband renditions.
var onePass bool

// endpointing is every session's LiveConfig.Endpointing (0: the default).
var endpointing time.Duration

// warmChannel scores each clip's second pass through one live session.
var warmChannel bool

// batch runs the batch path too.
var batch = true

// telephoneModel is the model directory of the narrowband renditions.
var telephoneModel string

// phases is how many frame phases every clip is decoded at (-phases).
var phases = 1

// record scores the stored record too (-record).
var record bool

// heldOut selects the corpus's held-out readers instead of the tuning
// subset (with -corpus).
var heldOut bool

// clip is one utterance in one rendition, as 16 kHz PCM after the
// rendition's codec and earshot's resampler.
type clip struct {
	name, transcript string
	pcm              []int16
}

func run(speech, corpus string, every int, presets, rends string, workers int) error {
	if revised && !batch {
		return fmt.Errorf("-revised decodes on the batch pool: not with -batch=false")
	}
	set, err := listClips(speech, corpus, every)
	if err != nil {
		return err
	}
	fmt.Printf("livegap %s: %d clips (%s); %d CPUs; load average before: %s\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), len(set), setName(speech, corpus), runtime.NumCPU(), loadAvg())
	var stocks []stockRow
	var records, revs []string
	fmt.Println("| rendition | preset | batch WER % | live finals WER % | gap points | finals | words live / batch / reference | live segments lean | live CPU s per audio s | batch CPU s per audio s |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	for _, rend := range strings.Split(rends, ",") {
		clips, err := render(set, rend)
		if err != nil {
			return err
		}
		clips = phased(clips, phases)
		names := strings.Split(presets, ",")
		rs, err := measure(clips, rend, names, workers)
		if err != nil {
			return err
		}
		if stock && batch {
			w, err := stockWER(clips, workers)
			if err != nil {
				return err
			}
			stocks = append(stocks, stockRow{rend, w, rs[0].batchWER})
		}
		for k, r := range rs {
			p := names[k]
			if !batch {
				fmt.Printf("| %s | %s | | %.2f | | %d | %d / / %d | %d of %d | %.3f | |\n", rend, p, r.liveWER, r.finals, r.liveWords, r.refWords,
					r.lean, r.segments, r.liveCPU)
				continue
			}
			fmt.Printf("| %s | %s | %.2f | %.2f | %+.2f | %d | %d / %d / %d | %d of %d | %.3f | %.3f |\n", rend, p, r.batchWER, r.liveWER,
				r.liveWER-r.batchWER, r.finals, r.liveWords, r.batchWords, r.refWords, r.lean, r.segments, r.liveCPU, r.batchCPU)
			if revised {
				revs = append(revs, fmt.Sprintf("| %s | %s | %.2f | %.2f | %.2f | %+.2f | %d | %.3f | %.3f | %.3f |", rend, p, r.batchWER, r.liveWER,
					r.revisedWER, r.revisedWER-r.batchWER, r.revisions, r.liveCPU, r.revCPU, r.liveCPU+r.revCPU))
			}
			if record {
				records = append(records, fmt.Sprintf("| %s | %s | %.2f | %.2f | %.2f | %d of %d | %.4f |", rend, p, r.liveWER, r.batchWER, r.recordWER, r.fromLive, r.stretch, r.chooseCPU))
			}
		}
	}
	printTable("Stored record (issue 41: per stretch the live finals or the batch segments, whichever the batch engine scores higher):",
		"| rendition | preset | live finals WER % | batch WER % | record WER % | stretches from the live finals | scoring CPU s per audio s |", records)
	printTable("Revised finals (issue 41: each live decoder segment decoded again at its end on the batch pool, replacing its finals):",
		"| rendition | preset | batch WER % | live finals WER % | revised finals WER % | revised gap points | revisions | live CPU s per audio s | revision CPU s per audio s | live + revision CPU s per audio s |", revs)
	printStock(stocks)
	fmt.Printf("\nload average after: %s\n", loadAvg())
	return nil
}

func setName(speech, corpus string) string {
	if corpus != "" && heldOut {
		return "corpus test-other readers held out of the model's adaptation, utterances outside the tuning subset"
	}
	if corpus != "" {
		return "corpus tuning subset"
	}
	return "testdata"
}

// listClips reads the manifest of the chosen set.
func listClips(speech, corpus string, every int) ([]recognizertest.Clip, error) {
	dir := speech
	if corpus != "" {
		dir = corpus
	}
	if dir == "" {
		d, err := recognizertest.LocateSpeechDir()
		if err != nil {
			return nil, err
		}
		dir = d
	}
	if corpus == "" {
		f, err := os.Open(filepath.Join(dir, "manifest.tsv"))
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return recognizertest.ParseManifest(f, dir)
	}
	// The corpus manifest: file, duration_s, speaker, gender, transcript, ...
	b, err := os.ReadFile(filepath.Join(dir, "manifest.tsv"))
	if err != nil {
		return nil, err
	}
	var out []recognizertest.Clip
	held := 0
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
		f := strings.Split(line, "\t")
		if len(f) < 5 {
			return nil, fmt.Errorf("corpus manifest line %d: %d fields", i+2, len(f))
		}
		tuning := i%max(every, 1) == 0
		if heldOut {
			if tuning || !strings.HasPrefix(f[0], "ls-test-other-") {
				continue
			}
			if held++; held%3 != 1 {
				continue
			}
		} else if !tuning {
			continue
		}
		out = append(out, recognizertest.Clip{File: f[0], Path: filepath.Join(dir, f[0]), Transcript: f[4]})
	}
	return out, nil
}

type outcome struct {
	batchWER, liveWER float64
	recordWER         float64 // with -record
	revisedWER        float64 // with -revised
	revisions         int     // with -revised
	revCPU            float64 // with -revised: the revisions' CPU s per audio s
	fromLive, stretch int     // with -record: stretches the record took from the live finals, of all
	finals            int
	lean, segments    int // the live sessions' decoder segments on the lean search (recognizer.Live.LeanSegments), of all
	// the words of the live finals, of the batch path and of the
	// references: a path that writes more words than the references
	// inserts (issue 41: the held-out readers' live finals did)
	liveWords, batchWords, refWords int
	liveCPU, batchCPU               float64 // CPU s per audio s
	chooseCPU                       float64 // with -record: the combination's scoring, CPU s per audio s
}

// engineFor loads a pool of workers decoders with the preset's search
// settings as the daemon's pool of the rendition and use: for a narrowband
// rendition the telephone-band pool (the telephone model and its search
// defaults: Config.TelephoneBatch with batch, for whole recordings, else
// Config.Telephone, for live calls), for wideband the wideband pool with
// batch, else its live pool (Config.Live).
func engineFor(rend, preset string, workers int, batch bool) (*sphinx.Engine, error) {
	var cfg sphinx.Config
	if err := cfg.ApplyPreset(preset); err != nil {
		return nil, err
	}
	cfg.Decoders, cfg.TelephoneDecoders, cfg.LiveDecoders = workers, workers, workers
	cfg.TelephoneHMM = sphinx.NoTelephoneHMM
	if narrowband(rend) {
		// Set whether or not it is there: the engine's own check refuses a
		// missing model, where a narrowband rendition decoded on the
		// wideband model instead (as livegap did until 2026-11-30 when run
		// away from the checkout's root, the default path being relative to
		// it) reads about twice the telephone model's WER and would be taken
		// for a measurement.
		abs, err := filepath.Abs(telephoneModel)
		if err != nil {
			return nil, err
		}
		cfg.TelephoneHMM = abs
	}
	cfg.SetDefaults()
	cpu := recognizer.NewCPU(cfg.LiveDecodes) // the engine's own, as the daemon's is its process's
	if e, err := sphinx.NewTelephone(cfg, batch, cpu, nil); e != nil || err != nil {
		return e, err
	}
	if !batch {
		return sphinx.NewLive(cfg, cpu, nil)
	}
	return sphinx.New(cfg, cpu, nil)
}

// measure runs the batch and the live path of one rendition on every
// preset. Presets take turns on each clip, and CPU is each decode's own
// thread's (RUSAGE_THREAD, the worker goroutine locked to its thread), so
// a load that comes and goes on a shared machine weighs on every preset
// alike.
func measure(clips []clip, rend string, presets []string, workers int) ([]outcome, error) {
	engines := make([][2]*sphinx.Engine, len(presets)) // live, batch
	for k, p := range presets {
		for j := range 2 {
			if j == 1 && !batch {
				continue
			}
			e, err := engineFor(rend, p, workers, j == 1)
			if err != nil {
				return nil, err
			}
			defer e.Close()
			engines[k][j] = e
		}
	}
	audio := 0.0
	for _, c := range clips {
		audio += float64(len(c.pcm)) / recognizer.SampleRate
	}
	type hyp struct {
		batch, live       string
		batchSegs, liveFs string // with LIVEGAP_VERBOSE: each segment's and final's times and text
		record            string // with -record
		revised           string // with -revised
		revisions         int
		revCPU            time.Duration
		batchUtts         []transcript.Utterance
		fromLive, stretch int
		finals            int
		lean, segments    int
		batchCPU, liveCPU time.Duration
		chooseCPU         time.Duration // with -record
	}
	hyps := make([][]hyp, len(presets))
	for k := range hyps {
		hyps[k] = make([]hyp, len(clips))
	}
	err := each(clips, workers, func(i int, c clip) error {
		for k, e := range engines {
			h := &hyps[k][i]
			if batch {
				cpu := threadCPU()
				text, segs, butts, err := decodeBatch(e[1], c.pcm)
				if err != nil {
					return err
				}
				h.batchUtts = butts
				h.batchCPU = threadCPU() - cpu
				h.batch, h.batchSegs = text, segs
			}
			var rv *reviser
			if revised {
				rv = &reviser{e: e[1]}
			}
			cpu := threadCPU()
			lr, err := decodeLive(e[0], c.pcm, narrowband(rend), onePass, rv)
			if err != nil {
				return err
			}
			live, fs, finals, lutts := lr.text, lr.finals, lr.n, lr.utts
			h.lean, h.segments = lr.lean, lr.segments
			h.liveCPU = threadCPU() - cpu
			if rv != nil {
				if rv.err != nil {
					return rv.err
				}
				h.liveCPU -= rv.cpu
				h.revised, h.revisions, h.revCPU = rv.text(), rv.n, rv.cpu
			}
			h.live, h.liveFs, h.finals = live, fs, finals
			if record && batch {
				cpu := threadCPU()
				utts, fromLive, stretches, err := combine(e[1], rend, c, lutts, h.batchUtts)
				if err != nil {
					return err
				}
				h.chooseCPU = threadCPU() - cpu
				h.record, h.fromLive, h.stretch = pipeline.JoinUtterances(utts), fromLive, stretches
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]outcome, len(presets))
	for k := range presets {
		var be, le, re, ve, words int
		var bcpu, lcpu, vcpu, ccpu time.Duration
		for i, c := range clips {
			h := hyps[k][i]
			ref := recognizertest.Normalize(c.transcript)
			be += recognizertest.EditDistance(ref, recognizertest.Normalize(h.batch))
			le += recognizertest.EditDistance(ref, recognizertest.Normalize(h.live))
			re += recognizertest.EditDistance(ref, recognizertest.Normalize(h.record))
			ve += recognizertest.EditDistance(ref, recognizertest.Normalize(h.revised))
			out[k].revisions += h.revisions
			vcpu += h.revCPU
			out[k].fromLive += h.fromLive
			out[k].stretch += h.stretch
			words += len(ref)
			out[k].liveWords += len(recognizertest.Normalize(h.live))
			out[k].batchWords += len(recognizertest.Normalize(h.batch))
			out[k].finals += h.finals
			out[k].lean += h.lean
			out[k].segments += h.segments
			bcpu += h.batchCPU
			lcpu += h.liveCPU
			ccpu += h.chooseCPU
			if os.Getenv("LIVEGAP_VERBOSE") != "" {
				fmt.Fprintf(os.Stderr, "%s %s %s %.2fs batch errors %d live errors %d of %d words\n  ref:   %s\n  batch: %s\n  live:  %s\n  batch segments: %s\n  live finals: %s\n",
					rend, presets[k], c.name, float64(len(c.pcm))/recognizer.SampleRate,
					recognizertest.EditDistance(ref, recognizertest.Normalize(h.batch)),
					recognizertest.EditDistance(ref, recognizertest.Normalize(h.live)), len(ref),
					c.transcript, h.batch, h.live, h.batchSegs, h.liveFs)
			}
		}
		out[k].refWords = words
		out[k].batchWER = 100 * float64(be) / float64(max(words, 1))
		out[k].liveWER = 100 * float64(le) / float64(max(words, 1))
		out[k].recordWER = 100 * float64(re) / float64(max(words, 1))
		out[k].revisedWER = 100 * float64(ve) / float64(max(words, 1))
		out[k].revCPU = vcpu.Seconds() / audio
		out[k].batchCPU = bcpu.Seconds() / audio
		out[k].liveCPU = lcpu.Seconds() / audio
		out[k].chooseCPU = ccpu.Seconds() / audio
	}
	return out, nil
}

// decodeBatch is recognizer.Transcribe on one channel, one segment at a
// time on the calling goroutine: the default VAD's segments, each decoded
// in one pass on a stream of e.
func decodeBatch(e *sphinx.Engine, pcm []int16) (string, string, []transcript.Utterance, error) {
	var vad recognizer.VADConfig
	vad.SetDefaults()
	var words, segs []string
	var utts []transcript.Utterance
	for _, sp := range recognizer.Segment(pcm, vad) {
		st, err := e.NewStream(context.Background(), recognizer.StreamOptions{})
		if err != nil {
			return "", "", nil, err
		}
		u, err := st.(*sphinx.Stream).Decode(pcm[sp.Start:sp.End])
		st.Close()
		if err != nil {
			return "", "", nil, err
		}
		if u.Text != "" {
			words = append(words, u.Text)
			off := float64(sp.Start) / recognizer.SampleRate
			u.Start += off
			u.End += off
			for w := range u.Words {
				u.Words[w].Start += off
				u.Words[w].End += off
			}
			utts = append(utts, pipeline.ContractUtterance(u, "en"))
		}
		segs = append(segs, fmt.Sprintf("[%.2f-%.2f %s]", float64(sp.Start)/recognizer.SampleRate, float64(sp.End)/recognizer.SampleRate, u.Text))
	}
	return strings.Join(words, " "), strings.Join(segs, " "), utts, nil
}

// combine is the stored record of a live session over pcm (issue 41):
// the live finals or the batch segments, stretch by stretch, whichever a
// stream of the batch engine e scores higher.
func combine(e *sphinx.Engine, rend string, c clip, live, batch []transcript.Utterance) ([]transcript.Utterance, int, int, error) {
	pcm := c.pcm
	st, err := e.NewStream(context.Background(), recognizer.StreamOptions{})
	if err != nil {
		return nil, 0, 0, err
	}
	defer st.Close()
	ch := st.(*sphinx.Stream)
	utts, fromLive, stretches := pipeline.CombineUtterances(live, batch, func(_ int, start, end float64, alts [][]string) (int, error) {
		a := min(max(int(start*recognizer.SampleRate), 0), len(pcm))
		b := min(max(int(end*recognizer.SampleRate), a), len(pcm))
		return ch.Choose(pcm[a:b], alts)
	})
	if err := dumpStretches(ch, rend, c, pcm, live, batch); err != nil {
		return nil, 0, 0, err
	}
	return utts, fromLive, stretches, nil
}

// liveRun is what decodeLive reports of one session: its finals joined
// (text), each with its times and the speech starts and ends (finals), their
// count (n), the finals as utterances, and how many of its decoder segments
// were on the lean search (recognizer.Live.LeanSegments), of all.
type liveRun struct {
	text, finals   string
	n              int
	utts           []transcript.Utterance
	lean, segments int
}

// decodeLive streams pcm through a Live with default session settings in
// 20 ms writes and returns what the session gave (liveRun). narrow is a telephone-band
// rendition: the session is told so, as the daemon's is for a source below
// 16 kHz (LiveConfig.Narrowband), and onePass applies to it only. rv, when
// not nil, takes the finals and decodes the ended segments again.
func decodeLive(e recognizer.Engine, pcm []int16, narrow, onePass bool, rv *reviser) (liveRun, error) {
	var words, fs []string
	var utts []transcript.Utterance
	ep := params.DefaultEndpointing()
	if endpointing != 0 {
		ep.Silence = params.Seconds(endpointing)
	}
	cfg := recognizer.LiveConfig{Narrowband: narrow, OnePassFinals: narrow && onePass, Endpointing: ep, Segments: rv != nil}
	l, err := recognizer.NewLive(e, cfg, func(ev recognizer.Event) {
		switch ev.Kind {
		case recognizer.EventSegment:
			rv.segment(ev.Segment)
		case recognizer.EventFinal:
			if rv != nil {
				rv.final(ev.ID, ev.Utterance.Text)
			}
			words = append(words, ev.Utterance.Text)
			if ev.Utterance.Text != "" {
				utts = append(utts, pipeline.ContractUtterance(ev.Utterance, "en"))
			}
			fs = append(fs, fmt.Sprintf("[%.2f-%.2f %s]", ev.Utterance.Start, ev.Utterance.End, ev.Utterance.Text))
		case recognizer.EventSpeechStart:
			fs = append(fs, fmt.Sprintf("(start %.2f)", ev.Time))
		case recognizer.EventSpeechEnd:
			fs = append(fs, fmt.Sprintf("(end %.2f)", ev.Time))
		}
	})
	if err != nil {
		return liveRun{}, err
	}
	defer l.Close()
	const chunk = recognizer.SampleRate / 50
	if warmChannel {
		for k := 0; k < len(pcm); k += chunk {
			if err := l.Write(context.Background(), [][]int16{pcm[k:min(k+chunk, len(pcm))]}); err != nil {
				return liveRun{}, err
			}
		}
		if err := l.Flush(context.Background()); err != nil {
			return liveRun{}, err
		}
		words, fs, utts = nil, nil, nil
		if rv != nil {
			rv.reset()
		}
	}
	for k := 0; k < len(pcm); k += chunk {
		if err := l.Write(context.Background(), [][]int16{pcm[k:min(k+chunk, len(pcm))]}); err != nil {
			return liveRun{}, err
		}
	}
	if err := l.Flush(context.Background()); err != nil {
		return liveRun{}, err
	}
	lean, segments := l.LeanSegments()
	return liveRun{strings.Join(words, " "), strings.Join(fs, " "), len(words), utts, lean, segments}, nil
}

// each runs fn on every clip, workers at a time, and returns the first
// error.
func each(clips []clip, workers int, fn func(int, clip) error) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	next := make(chan int)
	for range max(workers, 1) {
		wg.Go(func() {
			runtime.LockOSThread() // threadCPU measures this goroutine's decodes
			defer runtime.UnlockOSThread()
			for i := range next {
				if err := fn(i, clips[i]); err != nil {
					mu.Lock()
					first = cmpOr(first, fmt.Errorf("%s: %w", clips[i].name, err))
					mu.Unlock()
				}
			}
		})
	}
	for i := range clips {
		next <- i
	}
	close(next)
	wg.Wait()
	return first
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// threadCPU is the calling thread's user + system CPU time so far.
func threadCPU() time.Duration {
	const rusageThread = 1 // RUSAGE_THREAD
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

// printTable prints a titled markdown table of rows under header (its
// separator line made from the header's columns); nothing without rows.
func printTable(title, header string, rows []string) {
	if len(rows) == 0 {
		return
	}
	fmt.Printf("\n%s\n\n%s\n|%s\n", title, header, strings.Repeat("---|", strings.Count(header, "|")-1))
	for _, r := range rows {
		fmt.Println(r)
	}
}
