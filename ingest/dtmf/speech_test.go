package dtmf_test

import (
	"fmt"
	"testing"

	"github.com/earshot-dev/earshot/ingest/dtmf"
	"github.com/earshot-dev/earshot/ingest/dtmf/dtmftest"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// speech is every clip of shared/testdata/speech at rate, through G.711
// mu-law when mulaw.
func speech(t *testing.T, rate int, mulaw bool) [][]int16 {
	t.Helper()
	files, err := dtmftest.Files(recognizertest.SpeechDir(t))
	if err != nil {
		t.Fatal(err)
	}
	var out [][]int16
	for _, f := range files {
		pcm, err := dtmftest.Speech(t.Context(), f, rate, mulaw)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, pcm)
	}
	return out
}

// TestSpeechNoKeys is the false-detection bound in make test: no key in
// any clip of the developer speech set (about 3 minutes), at 16 kHz and
// through G.711 at 8 kHz (bench/DTMF.md measures the whole corpus: under
// 1 per hour is the target, so none is expected in 6 minutes).
func TestSpeechNoKeys(t *testing.T) {
	for _, c := range []struct {
		rate  int
		mulaw bool
	}{{16000, false}, {8000, true}} {
		total := 0
		for i, pcm := range speech(t, c.rate, c.mulaw) {
			total += len(pcm)
			out, keys := run(t, c.rate, pcm, 160)
			for _, k := range keys {
				st, d := k.Seconds(c.rate)
				t.Errorf("%d Hz (mu-law %v) clip %d: false key at %.3f s for %.3f s", c.rate, c.mulaw, i, st, d)
			}
			if len(keys) == 0 && fmt.Sprint(out) != fmt.Sprint(pcm) {
				t.Errorf("clip %d: no key, but the audio changed", i)
			}
		}
		t.Logf("%d Hz mu-law %v: %.1f s of speech", c.rate, c.mulaw, float64(total)/float64(c.rate))
	}
}

// TestKeysInSpeech mixes keys into real speech at realistic levels (tones
// at -7/-5 dBm0 as a phone sends them, each clip at -20 dBm0 on average,
// a call's usual level) and finds every one, at the right time, and
// removes it.
func TestKeysInSpeech(t *testing.T) {
	for _, c := range []struct {
		rate  int
		mulaw bool
	}{{16000, false}, {8000, true}} {
		clips := speech(t, c.rate, c.mulaw)
		want, found := 0, 0
		for i, pcm := range clips[:8] {
			dtmftest.Scale(pcm, -20)
			placed := dtmftest.Sequence(pcm, c.rate, allKeys[i%4*4:i%4*4+4], dtmftest.Spec{Samples: ms(c.rate, 70), Low: -7, High: -5}, ms(c.rate, 500), ms(c.rate, 1000))
			if c.mulaw {
				dtmftest.MuLaw(pcm)
			}
			out, keys := run(t, c.rate, pcm, 160)
			want += len(placed)
			for _, p := range placed {
				k, ok := near(keys, p, c.rate)
				if !ok {
					t.Errorf("%d Hz clip %d: key %c at %.3f s missed", c.rate, i, p.Digit, float64(p.Start)/float64(c.rate))
					continue
				}
				found++
				if k.Digit != p.Digit {
					t.Errorf("%d Hz clip %d: key %c read as %c", c.rate, i, p.Digit, k.Digit)
				}
				// Removed: the tone's frequencies at reception noise.
				span := out[p.Start : p.Start+p.Samples]
				lo, hi, _ := dtmf.Frequencies(p.Digit)
				if l, h := dtmftest.Level(span, c.rate, lo), dtmftest.Level(span, c.rate, hi); max(l, h) > -60 {
					t.Errorf("%d Hz clip %d: key %c still at %.1f / %.1f dBm0 after removal", c.rate, i, p.Digit, l, h)
				}
			}
			if len(keys) > len(placed) {
				t.Errorf("%d Hz clip %d: %d keys for %d tones", c.rate, i, len(keys), len(placed))
			}
		}
		t.Logf("%d Hz: %d of %d keys found in speech", c.rate, found, want)
	}
}

// near is the key found within 20 ms of p's start.
func near(keys []dtmf.Key, p dtmftest.Placed, rate int) (dtmf.Key, bool) {
	for _, k := range keys {
		if abs(k.Start-int64(p.Start)) <= int64(ms(rate, 20)) {
			return k, true
		}
	}
	return dtmf.Key{}, false
}
