package diarization

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// mix is a mono recording built from clips of the shared speech set, with
// ground truth: each utterance's true speaker.
type mix struct {
	pcm  []int16
	utts []recognizer.Utterance
	ref  []int
}

// buildMix concatenates the clips of each turn (speaker, clip file) with
// gap seconds of silence between them and splits each clip into
// utterances with the batch VAD, keeping the clip's speaker as truth.
func buildMix(t *testing.T, gap float64, turns []turn) mix {
	t.Helper()
	dir := recognizertest.SpeechDir(t)
	var m mix
	silence := make([]int16, int(gap*sampleRate))
	for _, tr := range turns {
		ch := recognizertest.ReadWAV16(t, dir+"/"+tr.file)
		pcm := ch[0]
		off := len(m.pcm)
		for _, sp := range recognizer.Segment(pcm, vad) {
			m.utts = append(m.utts, recognizer.Utterance{
				Start: float64(off+sp.Start) / sampleRate,
				End:   float64(off+sp.End) / sampleRate,
			})
			m.ref = append(m.ref, tr.speaker)
		}
		m.pcm = append(m.pcm, pcm...)
		m.pcm = append(m.pcm, silence...)
	}
	return m
}

// vad cuts clips into utterances of a few seconds, as a live session's
// endpointing would.
var vad = recognizer.VADConfig{MinSilence: 200 * time.Millisecond, MaxSegment: 8 * time.Second}

type turn struct {
	speaker int
	file    string
}

// der is the diarization error rate of hyp against ref over utterance
// spans: with ground-truth boundaries there is no missed or false-alarm
// speech, so it is the speaker-confusion time over the total, under the
// mapping of hypothesis to reference speakers that minimises it.
func der(utts []recognizer.Utterance, ref, hyp []int) float64 {
	nh := slices.Max(hyp) + 1
	nr := slices.Max(ref) + 1
	// overlap[h][r] = seconds where hyp says h and ref says r.
	overlap := make([][]float64, nh)
	for h := range overlap {
		overlap[h] = make([]float64, nr)
	}
	total := 0.0
	for i, u := range utts {
		overlap[hyp[i]][ref[i]] += u.End - u.Start
		total += u.End - u.Start
	}
	// Best one-to-one mapping by trying every assignment (few speakers).
	best := 0.0
	var try func(h int, used []bool, sum float64)
	try = func(h int, used []bool, sum float64) {
		if h == nh {
			best = max(best, sum)
			return
		}
		try(h+1, used, sum) // h maps to no reference speaker
		for r := 0; r < nr; r++ {
			if !used[r] {
				used[r] = true
				try(h+1, used, sum+overlap[h][r])
				used[r] = false
			}
		}
	}
	try(0, make([]bool, nr), 0)
	return (total - best) / total
}

// twoSpeakers interleaves LJ Speech (one female reader) with LibriSpeech
// speaker 1089 (male).
var twoSpeakers = []turn{
	{0, "ljspeech-LJ001-0001.wav"},
	{1, "ls-test-clean-1089-134686-0000.wav"},
	{0, "ljspeech-LJ001-0002.wav"},
	{1, "ls-test-clean-1089-134686-0001.wav"},
	{0, "ljspeech-LJ001-0003.wav"},
	{1, "ls-test-clean-1089-134691-0000.wav"},
	{0, "ljspeech-LJ001-0004.wav"},
	{1, "ls-test-clean-1089-134691-0001.wav"},
	{0, "ljspeech-LJ001-0005.wav"},
	{0, "ljspeech-LJ001-0006.wav"},
}

// DER bounds: what was measured (in the test logs) plus a margin.
// Measured: two speakers 0.000 estimated and 0.000 with the count given;
// three speakers 0.284 estimated (the two men merged) and 0.000 given.
const (
	maxDERAuto   = 0.05
	maxDERFixed  = 0.05
	maxDER3Auto  = 0.35
	maxDER3Fixed = 0.05
)

func TestDER(t *testing.T) {
	m := buildMix(t, 0.6, twoSpeakers)
	tests := []struct {
		name   string
		cfg    Config
		maxDER float64
	}{
		{"estimated count", Config{}, maxDERAuto},
		{"number_of_speakers 2", Config{NumberOfSpeakers: 2}, maxDERFixed},
		{"min 2 max 3", Config{MinSpeakers: 2, MaxSpeakers: 3}, maxDERFixed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hyp, err := Diarize([][]int16{m.pcm}, m.utts, false, tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			d := der(m.utts, m.ref, hyp)
			t.Logf("DER %.3f over %d utterances (%.1f s), %d speakers found; ref %v hyp %v",
				d, len(m.utts), sumDur(m.utts), slices.Max(hyp)+1, m.ref, hyp)
			if d > tt.maxDER {
				t.Errorf("DER %.3f > %.3f", d, tt.maxDER)
			}
		})
	}
}

func sumDur(utts []recognizer.Utterance) float64 {
	s := 0.0
	for _, u := range utts {
		s += u.End - u.Start
	}
	return s
}

// TestThreeSpeakers adds the LibriVox reader of Sense and Sensibility to
// the two-speaker mix.
func TestThreeSpeakers(t *testing.T) {
	turns := []turn{
		{0, "ljspeech-LJ001-0001.wav"},
		{2, "librivox-sense-and-sensibility-01-0870.wav"},
		{1, "ls-test-clean-1089-134686-0000.wav"},
		{2, "librivox-sense-and-sensibility-01-0890.wav"},
		{0, "ljspeech-LJ001-0003.wav"},
		{1, "ls-test-clean-1089-134691-0001.wav"},
		{2, "librivox-sense-and-sensibility-01-0920.wav"},
		{0, "ljspeech-LJ001-0005.wav"},
		{1, "ls-test-clean-1089-134686-0001.wav"},
	}
	m := buildMix(t, 0.6, turns)
	tests := []struct {
		name   string
		cfg    Config
		maxDER float64
	}{
		{"estimated count", Config{}, maxDER3Auto},
		{"number_of_speakers 3", Config{NumberOfSpeakers: 3}, maxDER3Fixed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hyp, err := Diarize([][]int16{m.pcm}, m.utts, false, tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			d := der(m.utts, m.ref, hyp)
			t.Logf("DER %.3f over %d utterances (%.1f s), %d speakers found; ref %v hyp %v",
				d, len(m.utts), sumDur(m.utts), slices.Max(hyp)+1, m.ref, hyp)
			if d > tt.maxDER {
				t.Errorf("DER %.3f > %.3f", d, tt.maxDER)
			}
		})
	}
}

// TestOneSpeaker: a single reader (the 66 s LJ Speech clip cut by the
// VAD) must not be split when the count is estimated.
func TestOneSpeaker(t *testing.T) {
	m := buildMix(t, 0, []turn{{0, "ljspeech-LJ001-0007-to-0016-long.wav"}})
	hyp, err := Diarize([][]int16{m.pcm}, m.utts, false, Config{})
	if err != nil {
		t.Fatal(err)
	}
	n := slices.Max(hyp) + 1
	t.Logf("%d utterances, %d speakers found: %v", len(m.utts), n, hyp)
	if d := der(m.utts, m.ref, hyp); d > 0.15 {
		t.Errorf("one speaker split: DER %.3f, %d speakers", d, n)
	}
}

// TestDistinctChannels: with one source per channel the speaker is the
// channel, whatever the audio.
func TestDistinctChannels(t *testing.T) {
	dir := recognizertest.SpeechDir(t)
	ch := recognizertest.ReadWAV16(t, dir+"/stereo-two-speaker-librispeech.wav")
	utts := []recognizer.Utterance{{Channel: 0, End: 2}, {Channel: 1, Start: 1, End: 3}, {Channel: 0, Start: 3, End: 4}}
	got, err := Diarize(ch, utts, true, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []int{0, 1, 0}) {
		t.Errorf("got %v", got)
	}
}

func TestErrors(t *testing.T) {
	utts := []recognizer.Utterance{{Channel: 1, End: 1}}
	tests := []struct {
		name     string
		channels [][]int16
		cfg      Config
		want     error
	}{
		{"no audio", nil, Config{}, ErrNoAudio},
		{"channel out of range", [][]int16{make([]int16, 16000)}, Config{}, ErrChannel},
		{"bad config", [][]int16{make([]int16, 16000), make([]int16, 16000)}, Config{MinSpeakers: 3, MaxSpeakers: 2}, ErrConfig},
		{"negative count", nil, Config{NumberOfSpeakers: -1}, ErrConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Diarize(tt.channels, utts, false, tt.cfg)
			if !errors.Is(err, tt.want) {
				t.Errorf("err %v, want %v", err, tt.want)
			}
		})
	}
}

// TestEdgeCases: empty input, silence, utterances outside the audio and
// too short to cluster all get labels without error.
func TestEdgeCases(t *testing.T) {
	pcm := make([]int16, 3*sampleRate)
	tests := []struct {
		name string
		utts []recognizer.Utterance
	}{
		{"none", nil},
		{"silence", []recognizer.Utterance{{Start: 0, End: 1}, {Start: 1, End: 2}}},
		{"outside the audio", []recognizer.Utterance{{Start: 5, End: 6}, {Start: -1, End: 0.01}}},
		{"inverted times", []recognizer.Utterance{{Start: 2, End: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Diarize([][]int16{pcm}, tt.utts, false, Config{})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.utts) {
				t.Fatalf("%d labels for %d utterances", len(got), len(tt.utts))
			}
			for _, l := range got {
				if l != 0 {
					t.Errorf("labels %v, want all 0", got)
				}
			}
		})
	}
}

func TestChooseK(t *testing.T) {
	merges := []merge{{0, 1, 0.1}, {2, 3, 0.2}, {0, 2, 0.95}, {0, 4, 1.3}}
	tests := []struct {
		want, lo, hi, k int
	}{
		{0, 0, 0, 3},
		{2, 0, 0, 2},
		{0, 4, 0, 4},
		{0, 0, 1, 1},
		{9, 0, 0, 5},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt), func(t *testing.T) {
			if k := chooseK(5, merges, tt.want, tt.lo, tt.hi, 0.9); k != tt.k {
				t.Errorf("k = %d, want %d", k, tt.k)
			}
		})
	}
	if got := cut(5, merges[:2]); !slices.Equal(got, []int{0, 0, 1, 1, 2}) {
		t.Errorf("cut = %v", got)
	}
}
