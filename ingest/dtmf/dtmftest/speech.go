package dtmftest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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
