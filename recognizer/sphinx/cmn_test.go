package sphinx

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// priorModel makes a model directory of links to Debian's model files
// plus a CMNPriorFile holding prior (none when prior is nil).
func priorModel(t *testing.T, prior []byte) string {
	t.Helper()
	dir := t.TempDir()
	ents, err := os.ReadDir(DefaultHMM)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if err := os.Symlink(filepath.Join(DefaultHMM, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	if prior != nil {
		if err := os.WriteFile(filepath.Join(dir, CMNPriorFile), prior, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func near(a, b []float64, tol float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > tol {
			return false
		}
	}
	return true
}

// TestCMNPrior: a model's CMN prior (CMNPriorFile, else its -cmninit)
// is where a primed stream's normalisation starts from, blended with the
// primer by frame counts, and the live mean then follows the audio
// written (before, a primer of any length replaced the mean outright and
// the mean stayed there for the next 3 s of audio).
func TestCMNPrior(t *testing.T) {
	_, pcm := clip(t, "ls-test-clean-1089-134686-0000.wav")
	prior := []float64{45, -1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12}
	cfg := Config{Decoders: 2, HMM: priorModel(t, FormatCMNPrior(prior, "test prior"))}
	cfg.SetDefaults()
	e, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	primer := pcm[8000:11200] // 0.2 s of speech: a short first sound
	mean, n, err := e.CepstralMean(t.Context(), primer)
	if err != nil || n < 15 || n > 25 {
		t.Fatalf("CepstralMean: %d frames, %v", n, err)
	}
	st := openStream(t, e)
	if got := st.d.liveMean(); near(got, prior, 1e-3) {
		t.Fatalf("the prior is the live mean before any priming: %v", got)
	}
	st.SetCMNFrom(primer)
	want := make([]float64, len(prior))
	for j := range want {
		want[j] = (cmnPriorFrames*prior[j] + float64(n)*mean[j]) / float64(cmnPriorFrames+n)
	}
	primed := st.d.liveMean()
	if !near(primed, want, 1e-3) {
		t.Fatalf("primed live mean %v, want the blend of prior and primer %v (primer alone %v)", primed, want, mean)
	}
	writeChunks(t, st, pcm[11200:11200+16000])
	if after := st.d.liveMean(); near(after, primed, 1e-2) {
		t.Errorf("live mean %v unchanged after 1 s of speech", after)
	}
	if _, err := st.Finish(); err != nil {
		t.Fatal(err)
	}

	// Debian's model has the built-in prior; another model without a
	// prior file its own -cmninit.
	d := openStream(t, newEngine(t, 1)).d
	if builtin, err := ParseCMNPrior(defaultCMNPrior); err != nil || !near(floats(d.cmnPrior), builtin, 1e-3) {
		t.Errorf("Debian's model: prior %v, want the built-in %v (%v)", d.cmnPrior, builtin, err)
	}
	cfg = Config{Decoders: 1, HMM: priorModel(t, nil)}
	cfg.SetDefaults()
	other, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	if d := openStream(t, other).d; !slices.Equal(d.cmnPrior, d.cmnInit) {
		t.Errorf("a model without a prior: prior %v, want its -cmninit %v", d.cmnPrior, d.cmnInit)
	}

	for _, bad := range []string{"", "# only a comment\n", "1,2,x\n", "1,2\n", "1,2,3,4,5,6,7,8,9,10,11,12,13\n1,2,3\n", "NaN,1,1,1,1,1,1,1,1,1,1,1,1\n"} {
		cfg := Config{Decoders: 1, HMM: priorModel(t, []byte(bad))}
		cfg.SetDefaults()
		if e, err := New(cfg, nil); !errors.Is(err, ErrInit) {
			e.Close()
			t.Errorf("prior file %q: New error %v, want ErrInit", bad, err)
		}
	}
}

// TestCommittedCMNPrior: the telephone model's committed prior (`make
// cmn-prior`) parses and is the one its decoders start from.
func TestCommittedCMNPrior(t *testing.T) {
	dir, err := filepath.Abs("../../model/en-us-telephone")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, CMNPriorFile))
	if err != nil {
		t.Fatal(err)
	}
	want, err := ParseCMNPrior(b)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Decoders: 1, HMM: dir}
	cfg.SetDefaults()
	e, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	d := openStream(t, e).d
	if got := floats(d.cmnPrior); !near(got, want, 1e-3) {
		t.Errorf("telephone decoder's prior %v, file %v", got, want)
	}
}
