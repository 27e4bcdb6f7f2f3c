package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/earshot-dev/earshot/bench/internal/benchd"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
	"github.com/earshot-dev/earshot/recognizer/sphinx"
)

// narrowClip is one clip as a call carries it: G.711 mu-law at 8 kHz.
type narrowClip struct {
	ulaw       []byte
	transcript string
}

// narrowClips renders the clips to 8 kHz mu-law (ffmpeg, as a PBX
// recording would be) with their reference transcripts from the manifest.
func narrowClips(dir string) ([]narrowClip, error) {
	f, err := os.Open(filepath.Join(dir, "manifest.tsv"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	man, err := recognizertest.ParseManifest(f, dir)
	if err != nil {
		return nil, err
	}
	var out []narrowClip
	for _, name := range clips {
		i := slices.IndexFunc(man, func(c recognizertest.Clip) bool { return c.File == name })
		if i < 0 {
			return nil, fmt.Errorf("%s not in the manifest", name)
		}
		cmd := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-i", filepath.Join(dir, name), "-ar", "8000", "-ac", "1", "-f", "mulaw", "-")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		b, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("ffmpeg %s: %v %s", name, err, stderr.String())
		}
		out = append(out, narrowClip{ulaw: b, transcript: man[i].Transcript})
	}
	return out, nil
}

// runNarrow runs n concurrent 8 kHz mu-law sessions on a daemon with its
// default settings (decoders included; only the live capacity is raised
// so that n sessions are admitted). Session i streams the clips in order
// from clip i (mod the count), starting i*300 ms after the first, and its
// finals are scored against the same clips' transcripts.
func runNarrow(n int, cs []narrowClip, preset string) (*result, float64, error) {
	flags := []string{"--log-level", "info"}
	if preset != "" {
		set, err := sphinx.PresetSettings(preset)
		if err != nil {
			return nil, 0, err
		}
		for _, kv := range set {
			flags = append(flags, "--set", "sphinx."+kv)
		}
	}
	d, err := benchd.Start("live:\n  capacity: 64\n"+oneTenant+extraConfig, flags...)
	if err != nil {
		return nil, 0, err
	}
	defer d.Stop()
	r := &result{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var refs, hyps []string
	cpu0 := d.CPUSeconds()
	for i := range n {
		var audio []byte
		var ref []string
		for k := range cs {
			c := cs[(i+k)%len(cs)]
			audio = append(audio, c.ulaw...)
			ref = append(ref, c.transcript)
		}
		wg.Go(func() {
			time.Sleep(time.Duration(i) * 300 * time.Millisecond)
			res := sessionWith(d, audio, `{"encoding":"wav/ulaw","sample_rate":8000,"bit_depth":8}`, 160)
			mu.Lock()
			r.lat = append(r.lat, res.lat...)
			r.errors += res.errs
			refs = append(refs, strings.Join(ref, " "))
			hyps = append(hyps, strings.Join(res.finals, " "))
			mu.Unlock()
		})
	}
	wg.Wait()
	r.cpu = d.CPUSeconds() - cpu0
	slices.Sort(r.lat)
	errs, words := 0, 0
	for i := range refs {
		ref := recognizertest.Normalize(refs[i])
		errs += recognizertest.EditDistance(ref, recognizertest.Normalize(hyps[i]))
		words += len(ref)
	}
	return r, 100 * float64(errs) / float64(max(words, 1)), nil
}

// narrowTable prints the narrowband sweep, once per engine preset (""
// is the daemon's defaults).
func narrowTable(ns, presets, dir string, ref float64) error {
	cs, err := narrowClips(dir)
	if err != nil {
		return err
	}
	audioSec := 0.0
	for _, c := range cs {
		audioSec += float64(len(c.ulaw)) / 8000
	}
	fmt.Printf("\nNarrowband calls: G.711 mu-law 8 kHz WebSocket sessions, daemon defaults but for the preset's search settings, %.1f s of audio each.\n\n", audioSec)
	fmt.Println("| preset | sessions | finals | latency p50 ms | p95 ms | max ms | CPU s per session-s | ratio to pocketsphinx_batch | WER of finals % | errors |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	for _, p := range strings.Split(presets, ",") {
		name := p
		if p == "" {
			name = "(daemon defaults)"
		}
		for _, f := range strings.Split(ns, ",") {
			n, _ := strconv.Atoi(f)
			r, wer, err := runNarrow(n, cs, p)
			if err != nil {
				return err
			}
			cpu := r.cpu / (float64(n) * audioSec)
			fmt.Printf("| %s | %d | %d | %.0f | %.0f | %.0f | %.3f | %.2f | %.1f | %d |\n",
				name, n, len(r.lat), pct(r.lat, 0.5), pct(r.lat, 0.95), pct(r.lat, 1), cpu, cpu/ref, wer, r.errors)
		}
	}
	return nil
}
