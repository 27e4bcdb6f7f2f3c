package recognizer_test

import (
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
	"github.com/earshot-dev/earshot/recognizer/sphinx"
)

func rmsOf(x []int16) float64 {
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s / float64(len(x)))
}

func addAt(dst []int16, src []int16, gain float64) {
	for i := range dst {
		v := float64(dst[i]) + gain*float64(src[i%len(src)])
		dst[i] = int16(max(-32768, min(32767, v)))
	}
}

func TestLiveExploreEnh(t *testing.T) {
	if os.Getenv("EXPLORE2") == "" {
		t.Skip()
	}
	var scfg sphinx.Config
	scfg.SetDefaults()
	scfg.Decoders = 2
	e, err := sphinx.New(scfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	clips := recognizertest.Manifest(t)
	byName := map[string]recognizertest.Clip{}
	for _, c := range clips {
		byName[c.File] = c
	}
	targets := strings.Split(os.Getenv("EXPLORE2"), ",")
	// babble: 4 LJ/librivox clips summed
	var babble []int16
	for _, f := range []string{"librivox-sense-and-sensibility-01-0870.wav", "ljspeech-LJ001-0003.wav", "ls-dev-clean-2412-153948-0000.wav", "librivox-sense-and-sensibility-01-0920.wav"} {
		x := recognizertest.ReadWAV16(t, byName[f].Path)[0]
		if babble == nil {
			babble = make([]int16, 12*16000)
		}
		addAt(babble, x, 0.5)
	}
	r := rand.New(rand.NewPCG(1, 2))
	white := make([]int16, 12*16000)
	for i := range white {
		white[i] = int16(r.NormFloat64() * 1000)
	}
	for _, name := range targets {
		c := byName[name]
		clean := recognizertest.ReadWAV16(t, c.Path)[0]
		sr := rmsOf(clean)
		for _, cond := range []struct {
			name  string
			noise []int16
			snr   float64
		}{{"clean", nil, 0}, {"white10", white, 10}, {"white5", white, 5}, {"babble10", babble, 10}, {"babble5", babble, 5}} {
			pcm := append(make([]int16, 8000), clean...)
			pcm = append(pcm, make([]int16, 8000)...)
			if cond.noise != nil {
				g := sr / rmsOf(cond.noise) / math.Pow(10, cond.snr/20)
				addAt(pcm, cond.noise, g)
			}
			for _, enh := range []bool{false, true} {
				for _, th := range []float64{0.6, 0.2} {
				var finals []string
				n := 0
				l, err := recognizer.NewLive(e, recognizer.LiveConfig{Endpointing: 300e6, AudioEnhancer: enh, SpeechThreshold: th}, func(ev recognizer.Event) {
					if ev.Kind == recognizer.EventFinal {
						finals = append(finals, ev.Utterance.Text)
					}
					if ev.Kind == recognizer.EventSpeechStart {
						n++
					}
				})
				if err != nil {
					t.Fatal(err)
				}
				for i := 0; i < len(pcm); i += 320 {
					l.Write(t.Context(), [][]int16{pcm[i:min(i+320, len(pcm))]})
				}
				l.Flush(t.Context())
				l.Close()
				hyp := strings.Join(finals, " ")
				t.Logf("%s %s enh=%v th=%.1f: WER %.3f starts=%d %q", name, cond.name, enh, th, recognizertest.WER(c.Transcript, hyp), n, hyp)
				}
			}
		}
	}
}
