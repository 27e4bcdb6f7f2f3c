package psbatch

import (
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// TestRun decodes one clip of the speech set with the real
// pocketsphinx_batch and reads its hypothesis and CPU time back.
func TestRun(t *testing.T) {
	dir := recognizertest.SpeechDir(t)
	res, err := Run(t.Context(), DefaultModel(), dir, []string{"pocketsphinx-goforward.wav"})
	if err != nil {
		t.Fatal(err)
	}
	h, ok := res.Hyps["pocketsphinx-goforward"]
	if !ok || !strings.Contains(h, "forward") || res.CPU <= 0 {
		t.Errorf("hyps %q, cpu %v: want the clip's hypothesis (\"go forward ten meters\") and its CPU time", res.Hyps, res.CPU)
	}
}
