// Command legreplay replays the calls callbench -dump wrote through the live
// recogniser offline, on the telephone live pool (issue 41: diagnosis of
// the SIPREC live finals): each recording (the door's, G.711) decoded by
// earshot's decoder and resampler, then streamed in 20 ms chunks through
// one Live with a channel per leg, as the daemon's session does, and its
// live finals scored per leg against the turns' references (corpus WER).
// No daemon, no timing: with -lean=false every segment decodes on the full
// search, so a run is reproducible and the door, the box's load and the
// overload control are out of it.
//
//	go run ./bench/cmd/legreplay -dir DIR [-lean=false] [-max-hmms N] [-turns S] [-v]
//
// -turns S decodes every turn on its own instead, cut out of its leg with
// S seconds of the leg on either side (0: the clip's audio alone, as a
// single clip would be streamed). -v prints every turn's words too (each
// final word goes to the last turn of its leg that started before its
// middle), to diff whole legs against turns alone. Run from the repository
// root.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/earshot-dev/earshot/bench/internal/benchd"
	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
	"github.com/earshot-dev/earshot/recognizer/sphinx"
)

func main() {
	dir := flag.String("dir", "", "a callbench -dump directory")
	lean := flag.Bool("lean", true, "the pool's lean search as the daemon's (false: every segment on the full search)")
	maxHMMs := flag.Int("max-hmms", 0, "the telephone live pool's -maxhmmpf (0: its default; the lean search's is 1000)")
	turns := flag.Float64("turns", -1, "decode each turn alone with this many seconds of its leg around it (-1: whole legs)")
	verbose := flag.Bool("v", false, "print each turn's words and errors")
	flag.Parse()
	if err := run(*dir, *lean, *maxHMMs, *turns, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "legreplay:", err)
		os.Exit(1)
	}
}

type dump struct {
	Row   string `json:"row"`
	Turns []struct {
		Leg        int     `json:"leg"`
		Start      float64 `json:"start"`
		End        float64 `json:"end"`
		Transcript string  `json:"transcript"`
	} `json:"turns"`
}

// word is a final's word on the call's timeline.
type word struct {
	text string
	mid  float64
}

func run(dir string, lean bool, maxHMMs int, turns float64, verbose bool) error {
	var cfg sphinx.Config
	cfg.Decoders, cfg.TelephoneDecoders, cfg.LiveDecoders = 2, 2, 2
	abs, err := filepath.Abs(benchd.TelephoneModel)
	if err != nil {
		return err
	}
	cfg.TelephoneHMM, cfg.MaxHMMsPerFrame = abs, maxHMMs
	if !lean {
		cfg.OverloadMaxHMMsPerFrame = -1
	}
	cfg.SetDefaults()
	e, err := sphinx.NewTelephone(cfg, false, recognizer.NewCPU(cfg.LiveDecodes), nil)
	if err != nil {
		return err
	}
	if e == nil {
		return fmt.Errorf("no telephone model at %s", abs)
	}
	defer e.Close()
	// The calls' dumps; callbench -dump writes the clip references beside
	// them (reference-CODEC.json), which are no call.
	files, err := filepath.Glob(filepath.Join(dir, "*-call*.json"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no dumps in %q (%v)", dir, err)
	}
	words, errs, leanSegs, segs := 0, 0, 0, 0
	for _, f := range files {
		var d dump
		b, err := os.ReadFile(f)
		if err == nil {
			err = json.Unmarshal(b, &d)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		pcm, err := readCall(strings.TrimSuffix(f, ".json") + ".wav")
		if err != nil {
			return err
		}
		var texts [2][]string
		var heard [2][]word
		decode := func(chans [][]int16, leg int, off float64) error {
			l, err := recognizer.NewLive(e, recognizer.LiveConfig{Channels: len(chans), Narrowband: true, Endpointing: params.DefaultEndpointing()},
				func(ev recognizer.Event) {
					if ev.Kind == recognizer.EventFinal {
						texts[leg+ev.Channel] = append(texts[leg+ev.Channel], ev.Utterance.Text)
						for _, w := range ev.Utterance.Words {
							heard[leg+ev.Channel] = append(heard[leg+ev.Channel], word{w.Word, off + (w.Start+w.End)/2})
						}
					}
				})
			if err != nil {
				return err
			}
			defer l.Close()
			const chunk = recognizer.SampleRate / 50
			for k := 0; k < len(chans[0]); k += chunk {
				c := make([][]int16, len(chans))
				for i := range chans {
					c[i] = chans[i][k:min(k+chunk, len(chans[i]))]
				}
				if err := l.Write(context.Background(), c); err != nil {
					return err
				}
			}
			if err := l.Flush(context.Background()); err != nil {
				return err
			}
			a, s := l.LeanSegments()
			leanSegs, segs = leanSegs+a, segs+s
			return nil
		}
		if turns < 0 {
			err = decode(pcm, 0, 0)
		}
		for _, t := range d.Turns {
			if turns < 0 || err != nil {
				break
			}
			a := max(0, int((t.Start-turns)*recognizer.SampleRate))
			z := min(len(pcm[t.Leg]), int((t.End+turns)*recognizer.SampleRate))
			err = decode([][]int16{pcm[t.Leg][a:z]}, t.Leg, float64(a)/recognizer.SampleRate)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		for leg := range 2 {
			var ref []string
			for _, t := range d.Turns {
				if t.Leg == leg {
					ref = append(ref, t.Transcript)
				}
			}
			r := recognizertest.Normalize(strings.Join(ref, " "))
			n := recognizertest.EditDistance(r, recognizertest.Normalize(strings.Join(texts[leg], " ")))
			words, errs = words+len(r), errs+n
			fmt.Printf("%s leg %d: %d errors in %d words: %s\n", filepath.Base(f), leg, n, len(r), strings.Join(texts[leg], " "))
		}
		if verbose {
			printTurns(filepath.Base(f), d, heard)
		}
	}
	fmt.Printf("live finals WER %.3f (%d errors in %d words), %d of %d segments lean\n", float64(errs)/float64(max(words, 1)), errs, words, leanSegs, segs)
	return nil
}

// readCall decodes a dumped recording (two G.711 channels at 8 kHz) to
// 16 kHz samples per channel with earshot's decoder and resampler.
func readCall(path string) ([][]int16, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := bytes.NewReader(b)
	format, _, err := media.ReadWAVHeader(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	fr, err := media.NewFramer(format, recognizer.SampleRate)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	rest, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	pcm, _ := fr.Push(rest)
	out := make([][]int16, len(pcm))
	for i := range pcm {
		out[i] = append([]int16(nil), pcm[i]...)
	}
	if len(out) != 2 {
		return nil, fmt.Errorf("%s: %d channels, want a SIPREC call's 2", path, len(out))
	}
	return out, nil
}

// printTurns prints each turn's reference and words with their errors: a
// word goes to the last turn of its leg that started (less half a second)
// before its middle, or to the leg's first turn.
func printTurns(name string, d dump, heard [2][]word) {
	hyps := make([][]string, len(d.Turns))
	for leg, ws := range heard {
		for _, w := range ws {
			owner := -1
			for i, t := range d.Turns {
				if t.Leg == leg && (owner < 0 || w.mid >= t.Start-0.5) {
					owner = i
				}
			}
			if owner >= 0 {
				hyps[owner] = append(hyps[owner], w.text)
			}
		}
	}
	for i, t := range d.Turns {
		r := recognizertest.Normalize(t.Transcript)
		n := recognizertest.EditDistance(r, recognizertest.Normalize(strings.Join(hyps[i], " ")))
		fmt.Printf("  %s turn %d leg %d %.2f-%.2f: %d/%d\n    ref: %s\n    hyp: %s\n", name, i, t.Leg, t.Start, t.End, n, len(r), strings.Join(r, " "), strings.Join(hyps[i], " "))
	}
}
