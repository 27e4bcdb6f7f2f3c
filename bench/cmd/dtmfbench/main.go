// Command dtmfbench measures the in-band DTMF detector (ingest/dtmf) on
// real speech: false keys per hour of speech with no tones in it, and, with
// synthetic key sequences mixed into the same speech at several signal to
// speech ratios, the keys found, missed and misread and the timing error.
//
//	go run ./bench/cmd/dtmfbench [-speech DIR] [-corpus DIR] [-snr 20,10,5,0,-5] [-every 10]
//
// Every .wav and .flac of -speech and -corpus is decoded by earshot's own
// decoder (ingest/media: 16 kHz) and measured in four renditions: 16 kHz
// PCM (the WebSocket's wideband), 16 kHz through G.722 (ffmpeg's encoder,
// earshot's decoder: a G.722 call's audio), 8 kHz PCM (earshot's
// resampler) and 8 kHz through G.711 mu-law and back (a PCMU call's audio,
// the path that matters). For detection, keys (digits in turn through all
// 16) of 70 ms at a phone's level (-9 and -7 dBm0: the pair at -4.9 dBm0)
// are mixed into each clip every -every tenths of a second from 0.5 s, the
// clip scaled so that its mean power is SNR dB under the pair's (+20: a
// quiet talker at -25 dBm0; 0: speech as loud as the keys, its peaks
// clipped), then the rendition is made (the codec after mixing, as a
// phone's tones reach the network). A key is
// found when the first key overlapping it has its digit (misread when
// not); a further key overlapping it is a split, a key overlapping none is
// false. The false keys of the first table are listed on stderr (clip and
// time). Run from the repository root; it takes a few minutes (decoding
// the corpus, a G.722 encoder process per clip and condition).
package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/earshot-dev/earshot/ingest/codec/g722"
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
	mulaw bool // through G.711 mu-law and back
	g722  bool // through G.722: ffmpeg's encoder, earshot's decoder (ingest/codec/g722)
}

var renditions = []rendition{
	{name: "16 kHz PCM", rate: 16000},
	{name: "16 kHz G.722", rate: 16000, g722: true},
	{name: "8 kHz PCM", rate: 8000},
	{name: "8 kHz G.711 mu-law", rate: 8000, mulaw: true},
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
	return code(pcm, r)
}

// code passes pcm through r's codec, if it has one.
func code(pcm []int16, r rendition) ([]int16, error) {
	switch {
	case r.mulaw:
		dtmftest.MuLaw(pcm)
	case r.g722:
		return g722Trip(pcm)
	}
	return pcm, nil
}

// g722Trip encodes 16 kHz pcm with ffmpeg's G.722 encoder (as
// ingest/codec/codectest does for the decoder's tests) and decodes it with
// earshot's decoder, as a G.722 call reaches a session.
func g722Trip(pcm []int16) ([]int16, error) {
	in := make([]byte, 0, 2*len(pcm))
	for _, x := range pcm {
		in = binary.LittleEndian.AppendUint16(in, uint16(x))
	}
	cmd := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-f", "s16le", "-ar", "16000", "-ac", "1", "-i", "-", "-acodec", "g722", "-f", "g722", "-")
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	enc, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("ffmpeg g722: %v: %s", err, stderr.String())
	}
	dec, err := g722.NewDecoder()
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	return dec.Decode(enc, nil)
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

// The keys' levels in dBm0: a phone's (Q.23 asks -10 to -4 dBm0 per
// tone, the high one 1-2 dB louder).
const toneLow, toneHigh = -9.0, -7.0

// score counts one rendition and SNR over the clips.
type score struct {
	keys, found, misread, split, extra int
	startErr, durErr                   []float64 // ms, absolute
}

const keypad = "123A456B789C*0#D"

// clip mixes keys into clip n (16 kHz) at snr, renders it and scores the
// detector on it.
func (s *score) clip(c []int16, r rendition, snr float64, every, n int) error {
	pcm, err := render(c, rendition{rate: r.rate}) // the codec after the mixing
	if err != nil {
		return err
	}
	// The keys at a phone's level, the speech's mean power snr under the
	// pair's.
	pair := 10 * math.Log10(math.Pow(10, toneLow/10)+math.Pow(10, toneHigh/10))
	dtmftest.Scale(pcm, pair-snr)
	tmpl := dtmftest.Spec{Samples: r.rate * 70 / 1000, Low: toneLow, High: toneHigh}
	var digits strings.Builder
	for i := range len(pcm) / (r.rate * every / 10) {
		digits.WriteByte(keypad[(n+i)%len(keypad)])
	}
	placed := dtmftest.Sequence(pcm, r.rate, digits.String(), tmpl, r.rate/2, r.rate*every/10)
	if pcm, err = code(pcm, r); err != nil {
		return err
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
