package addonstest

import (
	"flag"
	"math"
	"testing"

	"github.com/earshot-dev/earshot/recognizer"
)

var (
	update = flag.Bool("update", false, "rewrite testdata from the engine's output")
	all    = flag.Bool("golden.all", false, "check every golden clip, not only the short ones")
)

// spotCheck are the golden clips TestGolden decodes by default (about 10 s
// of audio): decoding all of them takes a minute of CPU.
var spotCheck = []string{
	"stereo-two-speaker-librispeech.wav",
	"ls-test-clean-1089-134686-0001.wav",
	"ljspeech-LJ001-0002.wav",
}

// TestGolden decodes golden clips with the real engine and compares the
// words, times and confidences with the stored output: a few short ones by
// default, all with -golden.all, and rewrites them all with -update.
func TestGolden(t *testing.T) {
	clips := spotCheck
	if *update || *all {
		clips = GoldenClips
	}
	for _, tr := range Decode(t, clips...) {
		if *update {
			if err := writeGolden(tr.Clip.File, tr.Utterances); err != nil {
				t.Fatal(err)
			}
			continue
		}
		stored := Load(t, tr.Clip.File)
		if !sameUtterances(tr.Utterances, stored.Utterances) {
			t.Errorf("%s: engine output differs from testdata (run with -update if the engine changed on purpose)", tr.Clip.File)
		}
		if len(tr.Utterances) == 0 {
			t.Errorf("%s: no utterances", tr.Clip.File)
		}
	}
}

func sameUtterances(a, b []recognizer.Utterance) bool {
	if len(a) != len(b) {
		return false
	}
	near := func(x, y float64) bool { return math.Abs(x-y) < 1e-6 }
	for i := range a {
		if a[i].Text != b[i].Text || a[i].Channel != b[i].Channel || len(a[i].Words) != len(b[i].Words) ||
			!near(a[i].Start, b[i].Start) || !near(a[i].End, b[i].End) {
			return false
		}
		for j, w := range a[i].Words {
			v := b[i].Words[j]
			if w.Word != v.Word || !near(w.Start, v.Start) || !near(w.End, v.End) || !near(w.Confidence, v.Confidence) {
				return false
			}
		}
	}
	return true
}
