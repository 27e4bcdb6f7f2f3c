package psbatch

import (
	"path/filepath"
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

// TestRunPCM decodes the same clip from its samples, with silence as a
// second clip, and gets each hypothesis back in its place.
func TestRunPCM(t *testing.T) {
	pcm := recognizertest.ReadWAV16(t, filepath.Join(recognizertest.SpeechDir(t), "pocketsphinx-goforward.wav"))[0]
	hyps, res, err := RunPCM(t.Context(), DefaultModel(), [][]int16{make([]int16, 16000), pcm})
	if err != nil {
		t.Fatal(err)
	}
	if len(hyps) != 2 || strings.Contains(hyps[0], "forward") || !strings.Contains(hyps[1], "forward") || res.CPU <= 0 {
		t.Errorf("hyps %q, cpu %v: want no words for the silence, then \"go forward ten meters\"", hyps, res.CPU)
	}
}
