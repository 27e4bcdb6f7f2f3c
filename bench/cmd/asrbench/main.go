// Command asrbench measures earshot's speech recognition against Debian's
// pocketsphinx_batch in one run, on the same audio (every mono clip of
// shared/testdata/speech) with the same model files, and prints a markdown
// table: corpus WER, CPU seconds per audio second, wall time.
//
//	go run ./bench/cmd/asrbench [-speech DIR] [-stream=false] [-serial]
//
// The reference is one pocketsphinx_batch process decoding each file as
// one utterance (its CPU is the child's rusage, model load included, about
// 0.4 s). earshot is recognizer.Transcribe with the sphinx engine (one
// decoder per CPU, loaded before timing starts): VAD segmentation, then
// segments decoded in parallel; files go through two at a time, as the
// daemon's pre-recorded workers would take them. Its CPU is this process's
// getrusage delta around the run. With -stream it also decodes each file
// through the live path (100 ms Writes, one Finish, no VAD) to show the
// accuracy of incremental decoding; with -serial it repeats the batch run
// one file and one segment at a time, to show the CPU cost without two
// decoders sharing the machine's cores and caches. With -daemon (default
// on) it starts the real earshotd and sends every clip, at 16 kHz and as
// 8 kHz G.711 mu-law and A-law renditions (ffmpeg, zaf/g711), as a
// pre-recorded job and as a live WebSocket session with default settings,
// and reports the WER of the jobs, of the live finals and of the live
// sessions' stored records (after their batch pass) side by side.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/earshot-dev/earshot/bench/internal/psbatch"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
	"github.com/earshot-dev/earshot/recognizer/sphinx"
)

func main() {
	speech := flag.String("speech", "", "speech test set directory (default: shared/testdata/speech found above the working directory)")
	stream := flag.Bool("stream", true, "also measure the incremental (live) decoding path")
	serial := flag.Bool("serial", false, "also run earshot one file and one segment at a time (CPU without core sharing)")
	daemon := flag.Bool("daemon", true, "also measure the real daemon: pre-recorded jobs and live WebSocket finals, at 16 kHz and on G.711 renditions")
	flag.Parse()
	if err := run(context.Background(), *speech, *stream, *serial, *daemon); err != nil {
		fmt.Fprintln(os.Stderr, "asrbench:", err)
		os.Exit(1)
	}
}

// clip is one test file with its audio.
type clip struct {
	recognizertest.Clip
	pcm [][]int16
}

// row is one line of the result table.
type row struct {
	name         string
	errs, words  int
	cpu, wall    time.Duration
	audioSeconds float64
}

func run(ctx context.Context, speechDir string, stream, serial, daemon bool) error {
	if speechDir == "" {
		d, err := recognizertest.LocateSpeechDir()
		if err != nil {
			return err
		}
		speechDir = d
	}
	clips, err := loadClips(speechDir)
	if err != nil {
		return err
	}
	var audio float64
	for _, c := range clips {
		audio += float64(len(c.pcm[0])) / recognizer.SampleRate
	}
	var cfg sphinx.Config
	cfg.SetDefaults()
	fmt.Printf("asrbench %s: %d mono clips, %.1f s of audio; %s, %d CPUs; load average before: %s\n\n",
		time.Now().Format("2006-01-02 15:04"), len(clips), audio, cpuModel(), runtime.NumCPU(), loadAvg())

	ref, err := runReference(ctx, cfg, speechDir, clips)
	if err != nil {
		return err
	}
	ref.audioSeconds = audio
	ours, err := runEarshot(ctx, cfg, clips, modeBatch)
	if err != nil {
		return err
	}
	ours.audioSeconds = audio
	rows := []row{ref, ours}
	for _, m := range []struct {
		on   bool
		mode mode
	}{{serial, modeSerial}, {stream, modeStream}} {
		if !m.on {
			continue
		}
		r, err := runEarshot(ctx, cfg, clips, m.mode)
		if err != nil {
			return err
		}
		r.audioSeconds = audio
		rows = append(rows, r)
	}
	var drows []row
	var stock map[string]row
	if daemon {
		if stock, err = runStockRenditions(ctx, cfg, clips); err != nil {
			return err
		}
		for _, r := range renditions {
			if s, ok := stock[r.name]; ok {
				s.audioSeconds = audio
				rows = append(rows, s)
			}
		}
		if drows, err = runDaemon(clips); err != nil {
			return err
		}
	}

	fmt.Println("| engine | WER | errors / ref words | CPU s | CPU s per audio s | wall s | wall / CPU |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, r := range append(rows, drows...) {
		if r.cpu == 0 { // through the daemon: WER only
			fmt.Printf("| %s | %.2f%% | %d / %d | | | | |\n", r.name, 100*float64(r.errs)/float64(r.words), r.errs, r.words)
			continue
		}
		fmt.Printf("| %s | %.2f%% | %d / %d | %.1f | %.3f | %.1f | %.2f |\n", r.name,
			100*float64(r.errs)/float64(r.words), r.errs, r.words, r.cpu.Seconds(),
			r.cpu.Seconds()/r.audioSeconds, r.wall.Seconds(), r.wall.Seconds()/r.cpu.Seconds())
	}
	fmt.Println()
	werRef := 100 * float64(ref.errs) / float64(ref.words)
	werOurs := 100 * float64(ours.errs) / float64(ours.words)
	cpuRatio := ours.cpu.Seconds() / ref.cpu.Seconds()
	wallRatio := ours.wall.Seconds() / ours.cpu.Seconds()
	fmt.Printf("- WER: earshot %.2f%% vs reference %.2f%% (target <= reference + 1 point): %s\n", werOurs, werRef, verdict(werOurs <= werRef+1))
	fmt.Printf("- CPU: earshot %.2fx the reference's (target <= 1.15x): %s\n", cpuRatio, verdict(cpuRatio <= 1.15))
	fmt.Printf("- wall: earshot wall %.2fx its CPU on %d CPUs (target <= 0.6x): %s\n", wallRatio, runtime.NumCPU(), verdict(wallRatio <= 0.6))
	for i := 0; i+2 < len(drows); i += 3 {
		b, l, st := drows[i], drows[i+1], drows[i+2]
		wb, wl, ws := 100*float64(b.errs)/float64(b.words), 100*float64(l.errs)/float64(l.words), 100*float64(st.errs)/float64(st.words)
		name := strings.TrimPrefix(l.name, "earshot live (WebSocket finals), ")
		if s, ok := stock[name]; ok {
			wst := 100 * float64(s.errs) / float64(s.words)
			fmt.Printf("- %s: earshot pre-recorded %.2f%% vs stock pocketsphinx_batch %.2f%% on the same rendition, %.2fx (target <= 0.7x): %s\n", name, wb, wst, wb/wst, verdict(wb <= 0.7*wst))
		}
		fmt.Printf("- %s: live finals %.2f%% vs pre-recorded %.2f%% (target <= pre-recorded + 2 points): %s\n", name, wl, wb, verdict(wl <= wb+2))
		fmt.Printf("- %s: live stored record %.2f%% vs pre-recorded %.2f%% (target within 0.5 points): %s\n", name, ws, wb, verdict(ws <= wb+0.5 && wb <= ws+0.5))
	}
	fmt.Printf("- load average after: %s\n", loadAvg())
	return nil
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

func loadClips(dir string) ([]clip, error) {
	f, err := os.Open(filepath.Join(dir, "manifest.tsv"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	all, err := recognizertest.ParseManifest(f, dir)
	if err != nil {
		return nil, err
	}
	var out []clip
	for _, c := range all {
		wf, err := os.Open(c.Path)
		if err != nil {
			return nil, err
		}
		pcm, err := recognizertest.DecodeWAV16(wf)
		wf.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.File, err)
		}
		if len(pcm) != 1 {
			continue // the reference tool reads mono only
		}
		out = append(out, clip{Clip: c, pcm: pcm})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no mono clips in %s", dir)
	}
	return out, nil
}

func runReference(ctx context.Context, cfg sphinx.Config, dir string, clips []clip) (row, error) {
	files := make([]string, len(clips))
	for i, c := range clips {
		files[i] = c.File
	}
	res, err := psbatch.Run(ctx, psbatch.Model{HMM: cfg.HMM, LM: cfg.LM, Dict: cfg.Dict}, dir, files)
	if err != nil {
		return row{}, err
	}
	r := row{name: "pocketsphinx_batch (reference)", wall: res.Wall, cpu: res.CPU}
	for _, c := range clips {
		h, ok := res.Hyps[strings.TrimSuffix(c.File, ".wav")]
		if !ok {
			return row{}, fmt.Errorf("pocketsphinx_batch gave no hypothesis for %s", c.File)
		}
		addErrors(&r, c.Transcript, h)
	}
	return r, nil
}

func addErrors(r *row, ref, hyp string) {
	rw := recognizertest.Normalize(ref)
	r.errs += recognizertest.EditDistance(rw, recognizertest.Normalize(hyp))
	r.words += len(rw)
}

// mode selects how runEarshot decodes.
type mode int

const (
	modeBatch  mode = iota // Transcribe, files and segments in parallel
	modeSerial             // Transcribe, one file and one segment at a time
	modeStream             // live path: Write 100 ms pieces, Finish
)

func (m mode) String() string {
	return [...]string{
		"earshot Transcribe (VAD + sphinx)",
		"earshot Transcribe, serial",
		"earshot live path (100 ms writes, no VAD)",
	}[m]
}

func runEarshot(ctx context.Context, cfg sphinx.Config, clips []clip, m mode) (row, error) {
	e, err := sphinx.New(cfg, recognizer.NewCPU(cfg.LiveDecodes), nil)
	if err != nil {
		return row{}, err
	}
	defer e.Close()
	workers := runtime.NumCPU()
	if m == modeSerial {
		workers = 1
	}
	texts := make([]string, len(clips))
	cpu0 := cpuTime()
	start := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	for i, c := range clips {
		g.Go(func() error {
			var err error
			if m == modeStream {
				texts[i], err = decodeStreaming(gctx, e, c.pcm[0])
				return err
			}
			res, err := recognizer.Transcribe(gctx, e, c.pcm, recognizer.BatchOptions{Concurrency: workers})
			if err != nil {
				return err
			}
			var parts []string
			for _, u := range res.Utterances {
				parts = append(parts, u.Text)
			}
			texts[i] = strings.Join(parts, " ")
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return row{}, err
	}
	r := row{name: m.String(), wall: time.Since(start), cpu: cpuTime() - cpu0}
	for i, c := range clips {
		addErrors(&r, c.Transcript, texts[i])
	}
	return r, nil
}

func decodeStreaming(ctx context.Context, e *sphinx.Engine, pcm []int16) (string, error) {
	st, err := e.NewStream(ctx, recognizer.StreamOptions{})
	if err != nil {
		return "", err
	}
	defer st.Close()
	for i := 0; i < len(pcm); i += 1600 {
		if err := st.Write(pcm[i:min(i+1600, len(pcm))]); err != nil {
			return "", err
		}
	}
	u, err := st.Finish()
	return u.Text, err
}

// cpuTime is this process's user plus system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}
