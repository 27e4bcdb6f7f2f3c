package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// utt is one utterance: a clip of one speaker with its transcript.
type utt struct {
	file, path, speaker, transcript string
	pcm8, pcm16                     []int16 // ffmpeg's 8 and 16 kHz renditions
}

// turn is one utterance placed in a call: on leg (0 or 1) from start
// (seconds of call time).
type turn struct {
	u     *utt
	leg   int
	start float64
}

func (t turn) end() float64 { return t.start + float64(len(t.u.pcm16))/16000 }

// call is two legs, each one speaker, taking turns.
type call struct {
	turns   []turn
	seconds float64 // the call's length: the last turn's end and 1 s
}

// loadUtts reads the mono clips of testdata (up to maxSeconds) and the
// corpus's held-out readers, as livegap -corpus -every 15 -held-out picks
// them (test-other readers, every third utterance outside the tuning
// subset), with their speaker.
func loadUtts(speech, corpus string, maxSeconds float64) ([]*utt, error) {
	f, err := os.Open(filepath.Join(speech, "manifest.tsv"))
	if err != nil {
		return nil, err
	}
	clips, err := recognizertest.ParseManifest(f, speech)
	f.Close()
	if err != nil {
		return nil, err
	}
	var out []*utt
	for _, c := range clips {
		if c.Duration > maxSeconds || strings.HasPrefix(c.File, "stereo-") {
			continue
		}
		out = append(out, &utt{file: c.File, path: c.Path, speaker: testdataSpeaker(c.File), transcript: c.Transcript})
	}
	b, err := os.ReadFile(filepath.Join(corpus, "manifest.tsv"))
	if err != nil {
		return nil, err
	}
	held := 0
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
		f := strings.Split(line, "\t")
		if len(f) < 5 {
			return nil, fmt.Errorf("corpus manifest line %d: %d fields", i+2, len(f))
		}
		if i%15 == 0 || !strings.HasPrefix(f[0], "ls-test-other-") {
			continue
		}
		if held++; held%3 != 1 {
			continue
		}
		var d float64
		fmt.Sscan(f[1], &d)
		if d > maxSeconds {
			continue
		}
		out = append(out, &utt{file: f[0], path: filepath.Join(corpus, f[0]), speaker: f[2], transcript: f[4]})
	}
	for _, u := range out {
		if u.pcm8, err = pcm(u.path, 8000); err != nil {
			return nil, err
		}
		if u.pcm16, err = pcm(u.path, 16000); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// testdataSpeaker names a testdata clip's speaker from its file name:
// LibriSpeech's reader id, or the source (one reader each).
func testdataSpeaker(file string) string {
	f := strings.Split(file, "-")
	if f[0] == "ls" && len(f) > 3 {
		return "ls-" + f[3]
	}
	return f[0]
}

// buildCalls pairs legs of two utterances of one speaker with a leg of
// another speaker: turns alternate A, B, A, B with gaps drawn from
// 0.3-1.5 s, every third change of turn an overlap of 0.2-0.5 s instead.
// The same seed gives the same calls.
func buildCalls(utts []*utt, n int) ([]call, error) {
	bySpeaker := map[string][]*utt{}
	var speakers []string
	for _, u := range utts {
		if _, ok := bySpeaker[u.speaker]; !ok {
			speakers = append(speakers, u.speaker)
		}
		bySpeaker[u.speaker] = append(bySpeaker[u.speaker], u)
	}
	// Legs: two utterances each, speakers taken in turn so that
	// neighbouring legs (paired below) are different speakers.
	var legs [][]*utt
	for more := true; more; {
		more = false
		for _, s := range speakers {
			if us := bySpeaker[s]; len(us) >= 2 {
				legs = append(legs, us[:2])
				bySpeaker[s] = us[2:]
				more = true
			}
		}
	}
	rng := rand.New(rand.NewPCG(41, 2))
	var calls []call
	for i := 0; i+1 < len(legs) && len(calls) < n; i += 2 {
		a, b := legs[i], legs[i+1]
		if a[0].speaker == b[0].speaker {
			return nil, fmt.Errorf("legs %d and %d are both %s", i, i+1, a[0].speaker)
		}
		var c call
		t := 0.5
		for k, u := range []*utt{a[0], b[0], a[1], b[1]} {
			tr := turn{u: u, leg: k % 2, start: t}
			c.turns = append(c.turns, tr)
			if k%3 == 2 {
				t = tr.end() - (0.2 + 0.3*rng.Float64())
			} else {
				t = tr.end() + 0.3 + 1.2*rng.Float64()
			}
		}
		for _, tr := range c.turns {
			c.seconds = max(c.seconds, tr.end()+1)
		}
		calls = append(calls, c)
	}
	if len(calls) < n {
		return nil, fmt.Errorf("speech for %d calls, %d asked", len(calls), n)
	}
	return calls, nil
}

// legPCM is a leg's whole signal at rate (8000 or 16000): its turns in
// place, silence between; leg -1 mixes both legs (a plain call's one
// stream).
func (c call) legPCM(leg, rate int) []int16 {
	out := make([]int32, int(c.seconds*float64(rate)))
	for _, t := range c.turns {
		if leg >= 0 && t.leg != leg {
			continue
		}
		src := t.u.pcm16
		if rate == 8000 {
			src = t.u.pcm8
		}
		at := int(t.start * float64(rate))
		for i, v := range src {
			if at+i < len(out) {
				out[at+i] += int32(v)
			}
		}
	}
	pcm := make([]int16, len(out))
	for i, v := range out {
		pcm[i] = int16(min(max(v, -32768), 32767))
	}
	return pcm
}

// reference is what leg said, its turns in order (leg -1: both legs).
func (c call) reference(leg int) string {
	var words []string
	for _, t := range c.turns {
		if leg < 0 || t.leg == leg {
			words = append(words, t.u.transcript)
		}
	}
	return strings.Join(words, " ")
}

// pcm decodes an audio file to mono 16-bit PCM at rate with ffmpeg.
func pcm(path string, rate int) ([]int16, error) {
	out, err := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-i", path, "-ac", "1", "-ar", fmt.Sprint(rate), "-f", "s16le", "-").Output()
	if err != nil {
		return nil, fmt.Errorf("ffmpeg %s: %w", path, err)
	}
	s := make([]int16, len(out)/2)
	binary.Read(bytes.NewReader(out), binary.LittleEndian, s)
	return s, nil
}

// ffmpeg pipes PCM at rate through ffmpeg with the given output arguments.
func ffmpeg(in []int16, rate int, args ...string) ([]byte, error) {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, in)
	cmd := exec.Command("ffmpeg", slices.Concat([]string{"-nostdin", "-v", "error", "-f", "s16le", "-ar", fmt.Sprint(rate), "-ac", "1", "-i", "-"}, args, []string{"-"})...)
	cmd.Stdin = &b
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("ffmpeg %v: %w", args, err)
	}
	return out, nil
}

// codec is how a leg is carried: the RTP payload type, the payload bytes
// a 20 ms packet carries, and the encoder (ffmpeg's, as a PBX's).
type codec struct {
	name  string
	pt    uint8
	rate  int      // the PCM rate encoded
	args  []string // ffmpeg output arguments of the RTP payload stream
	clip  []string // ffmpeg output arguments of the single clip uploaded as the reference
	frame int      // payload bytes per 20 ms
}

var codecs = map[string]codec{
	"PCMU": {name: "PCMU", pt: 0, rate: 8000, args: []string{"-f", "mulaw"}, clip: []string{"-c:a", "pcm_mulaw", "-f", "wav"}, frame: 160},
	"G722": {name: "G722", pt: 9, rate: 16000, args: []string{"-c:a", "g722", "-f", "g722"}, frame: 160},
}

// phase is where turn t's first sample falls within a 10 ms analysis
// frame at rate: the samples from the frame boundary before it. legPCM
// places the turn at int(start*rate), the record's batch pass cuts its
// stretches on a 10 ms grid of call time (VADConfig.FrameMs), and the
// decoder frames a stretch from its start, so the clip is framed this
// many samples later in the call than as a file of its own.
func (t turn) phase(rate int) int {
	return int(t.start*float64(rate)) % (rate / 100)
}

// clipAudio is utterance u as the reference uploads it: G.711 in a WAV
// at 8 kHz, or G.722's round trip as 16 kHz PCM WAV (the daemon takes no
// raw G.722 file), after pad samples of digital silence (pad < 10 ms: a
// frame phase; 0 is the file as it is).
func (k codec) clipAudio(u *utt, pad int) ([]byte, error) {
	if k.clip != nil {
		return ffmpeg(padded(u.pcm8, pad), 8000, k.clip...)
	}
	enc, err := ffmpeg(padded(u.pcm16, pad), 16000, k.args...)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-f", "g722", "-i", "-", "-ar", "16000", "-ac", "1", "-c:a", "pcm_s16le", "-f", "wav", "-")
	cmd.Stdin = bytes.NewReader(enc)
	return cmd.Output()
}

func padded(pcm []int16, pad int) []int16 {
	return append(make([]int16, pad, pad+len(pcm)), pcm...)
}
