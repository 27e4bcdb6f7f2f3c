package sphinx

import (
	"fmt"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/recognizer"
)

// TestCarryOverForgotten: a stream's words, their times and confidences
// are the same on a fresh decoder and after a whole-utterance decode on
// it, on the telephone live pool and on the wideband pool, and a stream
// leaves the next the PTM top-N history as ps_init did. Before, the
// feature buffers a whole-utterance decode grows carried over
// (carryover.go): 12 of this clip's 26 words moved on the telephone
// pool, 7 times or confidences on the wideband one; and so did the top-N
// history, which no short clip shows in words: on testdata's 66 s
// LJSpeech clip through the telephone live pool, resetting it between a
// session's own decoder segments changed the words of one of its finals
// (docs/live-tuning.md, 2026-11-30 23:40 UTC).
func TestCarryOverForgotten(t *testing.T) {
	_, speech := clip(t, "ljspeech-LJ001-0001.wav")
	_, other := clip(t, "ljspeech-LJ001-0002.wav")
	for _, pool := range []struct {
		name string
		cfg  func(*Config)
	}{
		{"telephone live", func(c *Config) { c.TelephoneHMM = "../../model/en-us-telephone" }},
		{"wideband", nil},
	} {
		t.Run(pool.name, func(t *testing.T) {
			cfg := Config{Decoders: 1, TelephoneDecoders: 1}
			cfg.SetDefaults()
			cpu := recognizer.NewCPU(cfg.LiveDecodes)
			var e *Engine
			var err error
			if pool.cfg == nil {
				e, err = New(cfg, cpu, nil)
			} else {
				pool.cfg(&cfg)
				e, err = NewTelephone(cfg, false, cpu, nil)
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { e.Close() })
			topNFresh := func() bool {
				st := openStream(t, e)
				defer st.Close()
				return st.d.carry != nil && st.d.carry.topNFresh(st.d.ps)
			}
			if !topNFresh() {
				t.Fatal("a fresh decoder's PTM top-N history is not as ps_init left it")
			}
			stream := func(pcm []int16) string {
				st := openStream(t, e)
				defer st.Close()
				st.SetCMNFrom(pcm[:recognizer.SampleRate])
				var out []string
				for half := range 2 {
					writeChunks(t, st, pcm[half*len(pcm)/2:(half+1)*len(pcm)/2])
					u, err := st.Finish()
					if err != nil {
						t.Fatal(err)
					}
					for _, w := range u.Words {
						out = append(out, fmt.Sprintf("%s/%.2f-%.2f/%.4f", w.Word, w.Start, w.End, w.Confidence))
					}
				}
				return strings.Join(out, " ")
			}
			fresh := stream(speech)
			if !topNFresh() {
				t.Error("the PTM top-N history a stream left was kept for the next")
			}
			st := openStream(t, e)
			if _, err := st.Decode(other); err != nil {
				t.Fatal(err)
			}
			st.Close()
			afterDecode := stream(speech)
			if afterDecode != fresh {
				t.Errorf("fresh decoder:\n  %s\nafter a whole-utterance decode:\n  %s", fresh, afterDecode)
			}
		})
	}
}
