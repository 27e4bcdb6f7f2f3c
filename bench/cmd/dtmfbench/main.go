// Command dtmfbench measures the in-band DTMF detector (ingest/dtmf) on
// real speech: false keys per hour of speech with no tones in it, and, with
// synthetic key sequences mixed into the same speech at several signal to
// speech ratios, the keys found, missed and misread and the timing error.
//
//	go run ./bench/cmd/dtmfbench [-speech DIR] [-corpus DIR] [-snr 20,10,5,0,-5] [-every 10]
//
// Every .wav and .flac of -speech and -corpus is decoded by earshot's own
// decoder (ingest/media: 16 kHz) and measured in three renditions: 16 kHz
// PCM (a G.722 call's audio, the WebSocket's wideband), 8 kHz PCM (earshot's
// resampler) and 8 kHz through G.711 mu-law and back (a call's audio, the
// path that matters). For detection, keys (digits in turn through all 16)
// of 70 ms with 2 dB twist (the high tone louder, as phones send) are mixed
// into each clip every -every tenths of a second from 0.5 s, at tone-pair
// power SNR dB over the clip's mean speech power, then the rendition is made
// (mu-law after mixing, as a phone's tones reach the network). A key is
// found when the first key overlapping it has its digit (misread when
// not); a further key overlapping it is a split, a key overlapping none is
// false. The false keys of the first table are listed on stderr (clip and
// time). Run from
// the repository root; it takes about a minute (decoding the corpus).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/earshot-dev/earshot/ingest/dtmf"
	"github.com/earshot-dev/earshot/ingest/dtmf/dtmftest"
)

func main() {
	speech := flag.String("speech", "../shared/testdata/speech", "developer speech set")
	corpus := flag.String("corpus", "../shared/corpus", "speech corpus")
	snrs := flag.String("snr", "20,10,5,0,-5", "signal (tone pair) to speech power ratios, dB")
	every := flag.Int("every", 10, "a key every so many tenths of a second")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, []string{*speech, *corpus}, *snrs, *every); err != nil {
		fmt.Fprintln(os.Stderr, "dtmfbench:", err)
		os.Exit(1)
	}
}

// clip is one decoded file.
type clip struct {
	name string
	pcm  []int16
}

// rendition is one way the speech reaches the detector.
type rendition struct {
	name  string
	rate  int
	mulaw bool
}

var renditions = []rendition{
	{"16 kHz PCM", 16000, false},
	{"8 kHz PCM", 8000, false},
	{"8 kHz G.711 mu-law", 8000, true},
}

func run(ctx context.Context, w io.Writer, dirs []string, snrList string, every int) error {
	var snrs []float64
	for _, s := range strings.Split(snrList, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return fmt.Errorf("-snr: %w", err)
		}
		snrs = append(snrs, v)
	}
	var clips []clip // 16 kHz
	for _, d := range dirs {
		files, err := dtmftest.Files(d)
		if err != nil {
			return err
		}
		for _, f := range files {
			pcm, err := dtmftest.Speech(ctx, f, 16000, false)
			if err != nil {
				return err
			}
			clips = append(clips, clip{name: filepath.Base(f), pcm: pcm})
		}
		fmt.Fprintf(w, "%s: %d files\n", d, len(files))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "### False keys in speech without tones")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| rendition | clips | hours | false keys | per hour |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
	for _, r := range renditions {
		var samples, falses int
		for _, c := range clips {
			pcm, err := render(c.pcm, r)
			if err != nil {
				return err
			}
			samples += len(pcm)
			keys := detect(pcm, r.rate)
			falses += len(keys)
			for _, k := range keys {
				st, d := k.Seconds(r.rate)
				fmt.Fprintf(os.Stderr, "false key: %s, %s at %.3f s for %.3f s\n", r.name, c.name, st, d)
			}
		}
		hours := float64(samples) / float64(r.rate) / 3600
		fmt.Fprintf(w, "| %s | %d | %.3f | %d | %.2f |\n", r.name, len(clips), hours, falses, float64(falses)/hours)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "### Keys mixed into the same speech")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| rendition | SNR dB | keys | found | rate | misread | split | false | start error mean / p95 ms | duration error mean / p95 ms |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range renditions {
		for _, snr := range snrs {
			var s score
			for i, c := range clips {
				if err := s.clip(c.pcm, r, snr, every, i); err != nil {
					return err
				}
			}
			fmt.Fprintf(w, "| %s | %+g | %d | %d | %.3f | %d | %d | %d | %.1f / %.1f | %.1f / %.1f |\n", r.name, snr, s.keys, s.found,
				float64(s.found)/float64(max(s.keys, 1)), s.misread, s.split, s.extra, mean(s.startErr), p95(s.startErr), mean(s.durErr), p95(s.durErr))
		}
	}
	return nil
}

// render makes rendition r of a 16 kHz clip (a copy).
func render(c []int16, r rendition) ([]int16, error) {
	pcm := slices.Clone(c)
	if r.rate != 16000 {
		var err error
		if pcm, err = dtmftest.Resample(pcm, 16000, r.rate); err != nil {
			return nil, err
		}
	}
	if r.mulaw {
		dtmftest.MuLaw(pcm)
	}
	return pcm, nil
}

// detect runs the filter over pcm in 20 ms writes.
func detect(pcm []int16, rate int) []dtmf.Key {
	f, err := dtmf.New(rate)
	if err != nil {
		panic(err) // rates are the renditions'
	}
	var keys []dtmf.Key
	step := rate / 50
	for i := 0; i < len(pcm); i += step {
		_, k := f.Write(pcm[i:min(i+step, len(pcm))])
		keys = append(keys, k...)
	}
	_, k := f.Flush()
	return append(keys, k...)
}

// score counts one rendition and SNR over the clips.
type score struct {
	keys, found, misread, split, extra int
	startErr, durErr                   []float64 // ms, absolute
}

const keypad = "123A456B789C*0#D"

// clip mixes keys into clip n (16 kHz) at snr, renders it and scores the
// detector on it.
func (s *score) clip(c []int16, r rendition, snr float64, every, n int) error {
	pcm, err := render(c, rendition{rate: r.rate}) // mu-law after the mixing
	if err != nil {
		return err
	}
	// The pair's power is the speech's mean power plus snr; the high tone
	// 2 dB over the low one.
	pair := dtmftest.RMS(pcm) + snr
	low := pair - 10*math.Log10(1+math.Pow(10, 0.2))
	tmpl := dtmftest.Spec{Samples: r.rate * 70 / 1000, Low: low, High: low + 2}
	var digits strings.Builder
	for i := range len(pcm) / (r.rate * every / 10) {
		digits.WriteByte(keypad[(n+i)%len(keypad)])
	}
	placed := dtmftest.Sequence(pcm, r.rate, digits.String(), tmpl, r.rate/2, r.rate*every/10)
	if r.mulaw {
		dtmftest.MuLaw(pcm)
	}
	keys := detect(pcm, r.rate)
	s.keys += len(placed)
	used := make([]bool, len(keys))
	for _, p := range placed {
		first := true
		for j, k := range keys {
			if k.Start >= int64(p.Start+p.Samples) || k.Start+k.Duration <= int64(p.Start) {
				continue // does not overlap the tone
			}
			used[j] = true
			switch {
			case !first:
				s.split++
			case k.Digit != p.Digit:
				s.misread++
			default:
				s.found++
				ms := 1000 / float64(r.rate)
				s.startErr = append(s.startErr, math.Abs(float64(k.Start-int64(p.Start)))*ms)
				s.durErr = append(s.durErr, math.Abs(float64(k.Duration-int64(p.Samples)))*ms)
			}
			first = false
		}
	}
	for _, u := range used {
		if !u {
			s.extra++
		}
	}
	return nil
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func p95(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	return v[(len(v)-1)*95/100]
}
