package pipeline

import (
	"slices"
	"testing"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/addons/addonstest"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// mixture is a mono recording built from clips of the speech set, with
// the engine's stored output for each clip shifted to its place, and the
// true speaker of each utterance.
type mixture struct {
	pcm      []int16
	utts     []recognizer.Utterance
	speakers []int
	offsets  map[string]float64 // clip → start time in the mixture
	duration float64
}

type turn struct {
	speaker int
	clip    string
}

func buildMixture(t *testing.T, gap float64, turns []turn) mixture {
	t.Helper()
	m := mixture{offsets: map[string]float64{}}
	silence := make([]int16, int(gap*recognizer.SampleRate))
	for _, tr := range turns {
		golden := addonstest.Load(t, tr.clip)
		pcm := recognizertest.ReadWAV16(t, golden.Clip.Path)[0]
		off := float64(len(m.pcm)) / recognizer.SampleRate
		m.offsets[tr.clip] = off
		for _, u := range golden.Utterances {
			u.Start += off
			u.End += off
			u.Words = slices.Clone(u.Words)
			for i := range u.Words {
				u.Words[i].Start += off
				u.Words[i].End += off
			}
			m.utts = append(m.utts, u)
			m.speakers = append(m.speakers, tr.speaker)
		}
		m.pcm = append(append(m.pcm, pcm...), silence...)
	}
	m.duration = float64(len(m.pcm)) / recognizer.SampleRate
	return m
}

// twoVoices alternates the LJ Speech reader (a woman) with LibriSpeech
// speaker 1089 (a man).
var twoVoices = []turn{
	{0, "ljspeech-LJ001-0001.wav"},
	{1, "ls-test-clean-1089-134686-0000.wav"},
	{0, "ljspeech-LJ001-0003.wav"},
	{1, "ls-test-clean-1089-134691-0001.wav"},
	{0, "ljspeech-LJ001-0005.wav"},
}

// speakerError is the share of speech time whose speaker differs from the
// truth under the best one-to-one mapping of labels (the diarization
// error rate with true utterance boundaries).
func speakerError(utts []recognizer.Utterance, ref, hyp []int) float64 {
	overlap := map[[2]int]float64{}
	total := 0.0
	for i, u := range utts {
		overlap[[2]int{hyp[i], ref[i]}] += u.End - u.Start
		total += u.End - u.Start
	}
	hs, rs := slices.Max(hyp)+1, slices.Max(ref)+1
	best := 0.0
	var try func(h int, used map[int]bool, sum float64)
	try = func(h int, used map[int]bool, sum float64) {
		if h == hs {
			best = max(best, sum)
			return
		}
		try(h+1, used, sum)
		for r := range rs {
			if !used[r] {
				used[r] = true
				try(h+1, used, sum+overlap[[2]int{h, r}])
				used[r] = false
			}
		}
	}
	try(0, map[int]bool{}, 0)
	return max(0, (total-best)/total)
}

// maxSpeakerError bounds the diarization error on twoVoices: measured
// 0.000 (every utterance on its speaker), plus a margin.
const maxSpeakerError = 0.05
