package dtmftest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/zaf/g711"
)

// Files lists the audio files of dir (.wav and .flac), sorted.
func Files(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("dtmftest: %w", err)
	}
	var out []string
	for _, e := range ents {
		if n := strings.ToLower(e.Name()); strings.HasSuffix(n, ".wav") || strings.HasSuffix(n, ".flac") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out, nil
}

// Speech decodes path with earshot's own decoder (16 kHz mono: the first
// channel) and returns it at rate (8000 or 16000); mulaw passes 8 kHz
// audio through G.711 mu-law and back, as a call carries it.
func Speech(ctx context.Context, path string, rate int, mulaw bool) ([]int16, error) {
	pcm, err := media.Decode(ctx, path, nil)
	if err != nil {
		return nil, err
	}
	if len(pcm.Channels) == 0 {
		return nil, fmt.Errorf("dtmftest: %s: no audio", path)
	}
	out := pcm.Channels[0]
	if rate != 16000 {
		out, err = Resample(out, 16000, rate)
		if err != nil {
			return nil, err
		}
	}
	if mulaw {
		MuLaw(out)
	}
	return out, nil
}

// SpeechFiles is Speech of each of paths, in order, for many files at a
// time. The files that are not WAV are first converted by one ffmpeg run
// into WAVs in a temporary directory, with the arguments media.Decode's own
// ffmpeg run takes (first audio stream, its channels kept, pcm_s16le at
// 16 kHz), so Speech then reads the same samples with no ffmpeg of its
// own (checked 2026-12-01: equal to Speech's for every file of the corpus
// and testdata, at 16 kHz and through mu-law at 8 kHz). A hundred FLAC
// files cost one ffmpeg start instead of an ffprobe and an ffmpeg each
// (about 0.12 CPU s a file: 24 of TestSpeechNoKeys' 25 CPU s).
func SpeechFiles(ctx context.Context, paths []string, rate int, mulaw bool) ([][]int16, error) {
	tmp, err := os.MkdirTemp("", "dtmftest-")
	if err != nil {
		return nil, fmt.Errorf("dtmftest: %w", err)
	}
	defer os.RemoveAll(tmp)
	read := slices.Clone(paths)
	var in, out []string
	for i, p := range paths {
		if strings.EqualFold(filepath.Ext(p), ".wav") {
			continue
		}
		read[i] = filepath.Join(tmp, strconv.Itoa(i)+".wav")
		in = append(in, "-i", "file:"+p)
		out = append(out, "-map", strconv.Itoa(len(in)/2-1)+":a:0", "-acodec", "pcm_s16le", "-ar", strconv.Itoa(media.OutputRate), read[i])
	}
	if len(in) > 0 {
		cmd := exec.CommandContext(ctx, media.DefaultFFmpeg, append(append([]string{"-nostdin", "-v", "error"}, in...), out...)...)
		if b, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("dtmftest: ffmpeg: %w: %s", err, b)
		}
	}
	pcm := make([][]int16, len(read))
	for i, p := range read {
		if pcm[i], err = Speech(ctx, p, rate, mulaw); err != nil {
			return nil, fmt.Errorf("dtmftest: %s: %w", paths[i], err)
		}
	}
	return pcm, nil
}

// Resample converts pcm from one rate to another with earshot's resampler.
func Resample(pcm []int16, from, to int) ([]int16, error) {
	rs, err := media.NewResampler(from, to)
	if err != nil {
		return nil, err
	}
	in := make([]float32, len(pcm))
	for i, x := range pcm {
		in[i] = float32(x) / 32768
	}
	f := rs.Process(in, nil)
	f = rs.Flush(f)
	return media.ToInt16(f, nil), nil
}

// MuLaw passes pcm through G.711 mu-law and back, in place.
func MuLaw(pcm []int16) {
	for i, x := range pcm {
		pcm[i] = g711.DecodeUlawFrame(g711.EncodeUlawFrame(x))
	}
}
