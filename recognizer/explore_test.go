package recognizer_test

import (
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
	"github.com/earshot-dev/earshot/recognizer/sphinx"
)

func TestExploreVAD(t *testing.T) {
	cfg := sphinx.Config{}
	cfg.SetDefaults()
	e, err := sphinx.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var E, N float64
	for _, c := range recognizertest.Manifest(t) {
		if strings.Contains(c.File, "stereo") {
			continue
		}
		pcm := recognizertest.ReadWAV16(t, c.Path)
		segs := recognizer.Segment(pcm[0], recognizer.VADConfig{})
		res, err := recognizer.Transcribe(t.Context(), e, pcm, recognizer.BatchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var txt []string
		for _, u := range res.Utterances {
			txt = append(txt, u.Text)
		}
		n := float64(len(recognizertest.Normalize(c.Transcript)))
		w := recognizertest.WER(c.Transcript, strings.Join(txt, " ")) * n
		E += w
		N += n
		t.Logf("%s err=%v n=%v segs=%v len=%d", c.File, w, n, segs, len(pcm[0]))
	}
	t.Logf("WER %.2f%%", 100*E/N)
}
