package recognizer_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
	"github.com/earshot-dev/earshot/recognizer/sphinx"
)

func TestLiveExplore(t *testing.T) {
	if os.Getenv("EXPLORE") == "" {
		t.Skip()
	}
	var scfg sphinx.Config
	scfg.SetDefaults()
	scfg.Decoders = 1
	e, err := sphinx.New(scfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, c := range recognizertest.Manifest(t) {
		if !strings.Contains(os.Getenv("EXPLORE"), c.File[len(c.File)-8:len(c.File)-4]) {
			continue
		}
		pcm := recognizertest.ReadWAV16(t, c.Path)
		for _, ep := range []time.Duration{50 * time.Millisecond, 300 * time.Millisecond} {
			var finals []string
			nu, nstart, npart := 0, 0, 0
			var maxFin time.Duration
			var tl []string
			l, err := recognizer.NewLive(e, recognizer.LiveConfig{Endpointing: ep, Partials: true}, func(ev recognizer.Event) {
				switch ev.Kind {
				case recognizer.EventFinal:
					finals = append(finals, ev.Utterance.Text)
					nu++
				case recognizer.EventSpeechStart:
					nstart++
					tl = append(tl, fmt.Sprintf("[%.2f", ev.Time))
				case recognizer.EventSpeechEnd:
					tl = append(tl, fmt.Sprintf("%.2f]", ev.Time))
				case recognizer.EventPartial:
					npart++
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			t0 := time.Now()
			for i := 0; i < len(pcm[0]); i += 320 {
				s := time.Now()
				if err := l.Write(t.Context(), [][]int16{pcm[0][i:min(i+320, len(pcm[0]))]}); err != nil {
					t.Fatal(err)
				}
				maxFin = max(maxFin, time.Since(s))
			}
			l.Flush(t.Context())
			el := time.Since(t0)
			l.Close()
			hyp := strings.Join(finals, " ")
			t.Logf("%s ep=%v: WER %.3f utts=%d starts=%d partials=%d rt=%.3f maxwrite=%v\n  %s\n  %s", c.File, ep, recognizertest.WER(c.Transcript, hyp), nu, nstart, npart, el.Seconds()/c.Duration, maxFin, hyp, strings.Join(tl, " "))
		}
	}
}
