package telmodel_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
	"github.com/earshot-dev/earshot/recognizer/sphinx"
	"github.com/earshot-dev/earshot/recognizer/sphinx/telmodel"
)

// modelDir is the committed telephone-band model (`make model`).
const modelDir = "../../../model/en-us-telephone"

// TestCommittedModel: the committed model is small (its own means under
// 1 MB, variances the same or a link, the rest links to Debian's model), loads, and makes
// fewer word errors than Debian's model on G.711 renditions of testdata
// clips (mu-law and A-law, decoded through earshot's pipeline as the doors
// and uploads are).
func TestCommittedModel(t *testing.T) {
	for _, f := range []string{"means", "variances"} {
		st, err := os.Lstat(filepath.Join(modelDir, f))
		if err != nil || f == "means" && !st.Mode().IsRegular() || st.Mode().IsRegular() && st.Size() >= 1<<20 {
			t.Fatalf("%s: %v (%v), want a file under 1 MB", f, err, st)
		}
	}
	for _, f := range []string{"feat.params", "mdef", "noisedict", "sendump", "transition_matrices"} {
		if target, err := os.Readlink(filepath.Join(modelDir, f)); err != nil || target != filepath.Join(sphinx.DefaultHMM, f) {
			t.Errorf("%s: link to %q (%v), want Debian's", f, target, err)
		}
	}
	abs, err := filepath.Abs(modelDir)
	if err != nil {
		t.Fatal(err)
	}
	stock := engine(t, sphinx.DefaultHMM)
	tel := engine(t, abs)
	if tel.AcousticModel() != "en-us-telephone" {
		t.Errorf("AcousticModel() = %q", tel.AcousticModel())
	}
	clips := map[string]string{}
	for _, c := range recognizertest.Manifest(t) {
		clips[c.File] = c.Transcript
	}
	var stockErrs, telErrs, words int
	for i, name := range []string{"ls-dev-clean-2412-153948-0000.wav", "ls-test-clean-1089-134686-0000.wav"} {
		law := telmodel.Laws[i%2]
		r, err := telmodel.Render(t.Context(), filepath.Join(recognizertest.SpeechDir(t), name), filepath.Join(t.TempDir(), "g711.wav"), law)
		if err != nil {
			t.Fatal(err)
		}
		ref := recognizertest.Normalize(clips[name])
		words += len(ref)
		for _, e := range []struct {
			eng  *sphinx.Engine
			errs *int
		}{{stock, &stockErrs}, {tel, &telErrs}} {
			br, err := recognizer.Transcribe(t.Context(), e.eng, [][]int16{r.PCM}, recognizer.BatchOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var hyp []string
			for _, u := range br.Utterances {
				hyp = append(hyp, recognizertest.Normalize(u.Text)...)
			}
			n := recognizertest.EditDistance(ref, hyp)
			*e.errs += n
			t.Logf("%s %s %s: %d errors / %d words: %q", e.eng.AcousticModel(), name, law, n, len(ref), hyp)
		}
	}
	t.Logf("word errors on %d words: stock %d, telephone %d", words, stockErrs, telErrs)
	if telErrs >= stockErrs {
		t.Errorf("telephone model %d errors, stock %d: no better", telErrs, stockErrs)
	}
}

func engine(t *testing.T, hmm string) *sphinx.Engine {
	t.Helper()
	cfg := sphinx.Config{HMM: hmm, Decoders: 1, TelephoneHMM: sphinx.NoTelephoneHMM}
	cfg.SetDefaults()
	e, err := sphinx.New(cfg, recognizer.NewCPU(cfg.LiveDecodes), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}
