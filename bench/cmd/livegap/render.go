package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os/exec"
	"strings"

	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
	"github.com/earshot-dev/earshot/recognizer/sphinx/telmodel"
)

// render makes the rendition of every mono clip: ffmpeg to the codec (as
// a PBX or a phone would send it), then earshot's own G.711 decoder and
// resampler (media.Framer, as the doors and the WebSocket do). The "-mag"
// renditions are companded by the Magnitude encoder instead of ffmpeg's
// (telmodel.Encoder: zaf/g711, as asrbench renders), from ffmpeg's 8 kHz
// samples.
func render(set []recognizertest.Clip, rend string) ([]clip, error) {
	var format media.Format
	var args []string
	var compand func([]byte) []byte
	var decode []string // a second ffmpeg, from the codec back to samples
	if law, ok := strings.CutSuffix(rend, "-mag"); ok {
		v := telmodel.Variant{Law: telmodel.MuLaw, Encoder: telmodel.Magnitude}
		if law == "alaw8k" {
			v.Law = telmodel.ALaw
		} else if law != "mulaw8k" {
			return nil, fmt.Errorf("unknown rendition %q", rend)
		}
		rend = law
		compand = func(b []byte) []byte {
			lin := make([]int16, len(b)/2)
			for i := range lin {
				lin[i] = int16(binary.LittleEndian.Uint16(b[2*i:]))
			}
			return v.Compand(lin)
		}
	}
	switch rend {
	case "pcm16k":
		format = media.Format{Encoding: media.LinearPCM, BitDepth: 16, SampleRate: 16000, Channels: 1}
		args = []string{"-ar", "16000", "-f", "s16le"}
	case "mulaw8k":
		format = media.Format{Encoding: media.MuLaw, BitDepth: 8, SampleRate: 8000, Channels: 1}
		args = []string{"-ar", "8000", "-f", "mulaw"}
	case "alaw8k":
		format = media.Format{Encoding: media.ALaw, BitDepth: 8, SampleRate: 8000, Channels: 1}
		args = []string{"-ar", "8000", "-f", "alaw"}
	case "g722":
		// ffmpeg's G.722 encoder, then its decoder back to 16 kHz samples
		// (the SIP door decodes with spandsp's: the same ITU codec).
		format = media.Format{Encoding: media.LinearPCM, BitDepth: 16, SampleRate: 16000, Channels: 1}
		args = []string{"-ar", "16000", "-c:a", "g722", "-f", "g722"}
		decode = []string{"-nostdin", "-v", "error", "-f", "g722", "-i", "-", "-ar", "16000", "-f", "s16le", "-"}
	default:
		return nil, fmt.Errorf("unknown rendition %q", rend)
	}
	if compand != nil {
		args = []string{"-ar", "8000", "-f", "s16le"} // ffmpeg's 8 kHz samples, companded here
	}
	var out []clip
	for _, c := range set {
		if ch, _ := probeChannels(c.Path); ch != 1 {
			continue
		}
		cmd := exec.Command("ffmpeg", append([]string{"-nostdin", "-v", "error", "-i", c.Path, "-ac", "1"}, append(args, "-")...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		b, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("ffmpeg %s: %v %s", c.File, err, stderr.String())
		}
		if compand != nil {
			b = compand(b)
		}
		if decode != nil {
			dec := exec.Command("ffmpeg", decode...)
			dec.Stdin = bytes.NewReader(b)
			stderr.Reset()
			dec.Stderr = &stderr
			if b, err = dec.Output(); err != nil {
				return nil, fmt.Errorf("ffmpeg %s: %v %s", c.File, err, stderr.String())
			}
		}
		fr, err := media.NewFramer(format, recognizer.SampleRate)
		if err != nil {
			return nil, err
		}
		pcm, _ := fr.Push(b)
		out = append(out, clip{name: c.File, transcript: c.Transcript, pcm: append([]int16(nil), pcm[0]...)})
	}
	return out, nil
}

// probeChannels returns the clip's channel count (ffprobe).
func probeChannels(path string) (int, error) {
	out, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries", "stream=channels", "-of", "csv=p=0", path).Output()
	if err != nil {
		return 0, err
	}
	var n int
	_, err = fmt.Sscan(strings.TrimSpace(string(out)), &n)
	return n, err
}

// narrowband reports whether the rendition is a telephone-band one (8 kHz
// G.711), decoded on the telephone pools; pcm16k and g722 are wideband.
func narrowband(rend string) bool { return rend != "pcm16k" && rend != "g722" }

// phased returns every clip at k frame phases: the clip as it is, then
// without its first 1/k, 2/k ... of a 10 ms frame (160 samples at 16 kHz,
// rounded to even samples so an 8 kHz rendition moves by whole samples of
// its own). PocketSphinx frames a decode from its first sample, and its
// words move with where the speech falls in those frames (bench/CALLS.md
// 2026-11-30: a clip through mu-law had 9 to 13 errors at four phases), so
// one phase is one draw; k of them average it out of a comparison.
// Nothing is added: only a few milliseconds of the clip's leading audio
// are dropped.
func phased(clips []clip, k int) []clip {
	if k <= 1 {
		return clips
	}
	out := make([]clip, 0, k*len(clips))
	for _, c := range clips {
		for i := range k {
			d := (160 * i / k) &^ 1
			out = append(out, clip{name: fmt.Sprintf("%s@%d", c.name, d), transcript: c.transcript, pcm: c.pcm[min(d, len(c.pcm)):]})
		}
	}
	return out
}
