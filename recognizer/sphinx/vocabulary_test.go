package sphinx

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// transcribe decodes the file at path on e, every stream with vocabulary
// v in its options (as the pipeline passes a job's custom_vocabulary).
func transcribe(t *testing.T, e recognizer.Engine, path string, v ...recognizer.VocabularyWord) string {
	t.Helper()
	br, err := recognizer.Transcribe(t.Context(), e, recognizertest.ReadWAV16(t, path), recognizer.BatchOptions{Vocabulary: v})
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, u := range br.Utterances {
		texts = append(texts, u.Text)
	}
	return strings.Join(texts, " ")
}

func manifestClip(t *testing.T, name string) recognizertest.Clip {
	t.Helper()
	c, _ := clip(t, name)
	return c
}

// TestVocabularyGain: the baseline decode of LJ001-0002 ("in being
// comparatively modern") says "mater" for "modern"; with "modern" in the
// vocabulary at the default intensity (0.5, whose floor comes from first
// principles: see minFloorLog10) the decode gets it. On the same one-decoder
// pool the next stream without vocabulary is back to the baseline (no
// leak), and the stream after that with the vocabulary again reuses the
// decoder holding it.
func TestVocabularyGain(t *testing.T) {
	e := newEngine(t, 1)
	c := manifestClip(t, "ljspeech-LJ001-0002.wav")
	voc := []recognizer.VocabularyWord{{Value: "modern", Intensity: 0.5}}

	base := transcribe(t, e, c.Path)
	if slices.Contains(strings.Fields(base), "modern") {
		t.Fatalf("baseline %q already has the word: the test shows nothing", base)
	}
	with := transcribe(t, e, c.Path, voc...)
	after := transcribe(t, e, c.Path)
	again := transcribe(t, e, c.Path, voc...)
	t.Logf("reference %q\nbaseline  %q (WER %.3f)\nwith      %q (WER %.3f)", c.Transcript,
		base, recognizertest.WER(c.Transcript, base), with, recognizertest.WER(c.Transcript, with))
	if !slices.Contains(strings.Fields(with), "modern") {
		t.Errorf("with vocabulary %q: no \"modern\"", with)
	}
	if recognizertest.WER(c.Transcript, with) >= recognizertest.WER(c.Transcript, base) {
		t.Errorf("WER did not improve: %q vs %q", with, base)
	}
	if after != base {
		t.Errorf("after a vocabulary stream, the same pool decodes %q, baseline %q: the vocabulary leaked", after, base)
	}
	if again != with {
		t.Errorf("second vocabulary run %q, first %q", again, with)
	}
	if total, busy := e.Stats(); total != 1 || busy != 0 {
		t.Errorf("stats %d/%d, want 1/0", total, busy)
	}
}

// TestVocabularyUnrelated checks a vocabulary of words that are not said
// does not make other files worse (the floor only ever raises the listed
// words; every other word loses 0.01 nats).
func TestVocabularyUnrelated(t *testing.T) {
	e := newEngine(t, 1)
	voc := []recognizer.VocabularyWord{
		{Value: "Dashwood", Intensity: 1}, {Value: "antecedents", Intensity: 0.5}, {Value: "counselled"}, {Value: "Gutenberg bible", Intensity: 0.8},
	}
	for _, name := range []string{"pocketsphinx-goforward.wav", "ls-test-clean-1089-134691-0000.wav", "ljspeech-LJ001-0002.wav"} {
		c := manifestClip(t, name)
		base, with := transcribe(t, e, c.Path), transcribe(t, e, c.Path, voc...)
		bw, ww := recognizertest.WER(c.Transcript, base), recognizertest.WER(c.Transcript, with)
		t.Logf("%s: baseline %.3f %q, with unrelated vocabulary %.3f %q", name, bw, base, ww, with)
		if ww > bw {
			t.Errorf("%s: WER %.3f with an unrelated vocabulary > %.3f without", name, ww, bw)
		}
	}
}

func TestResolveVocabulary(t *testing.T) {
	lx, err := loadLexicon(DefaultDict)
	if err != nil {
		t.Fatal(err)
	}
	v := lx.resolveVocabulary([]recognizer.VocabularyWord{
		{Value: "Dashwood", Intensity: 0.5}, // known: boosted only
		{Value: "counselled"},               // unknown: letter to sound, no boost
		{Value: "Zorblax", Intensity: 1, Pronunciations: []string{"Z AO1 R B L AE K S", "Q X"}}, // phones; one bad
		{Value: "Quentaro", Pronunciations: []string{"kwen tarrow"}},                            // respelling
		{Value: "carl", Pronunciations: []string{"K AO R L"}},                                   // alternate of a known word
		{Value: "Quorvix rocks", Pronunciations: []string{"core vix"}},                          // phrase: pronunciation ignored
		{Value: "1234"}, // nothing to say
	})
	if v == nil {
		t.Fatal("nil vocabulary")
	}
	adds := map[string]string{}
	for _, e := range v.add {
		adds[e.word] = strings.Join(e.phones, " ")
	}
	want := map[string]string{
		"counselled": strings.Join(letterToSound("counselled"), " "),
		"zorblax":    "Z AO R B L AE K S",
		"carl(2)":    "K AO R L",
	}
	for w, p := range want {
		if adds[w] != p {
			t.Errorf("entry %q = %q, want %q (all: %v)", w, adds[w], p, adds)
		}
	}
	if _, ok := adds["quentaro"]; !ok {
		t.Errorf("respelt word missing: %v", adds)
	}
	if _, ok := adds["dashwood"]; ok {
		t.Error("known word re-added")
	}
	if _, ok := adds["quorvix"]; !ok {
		t.Errorf("phrase word missing: %v", adds)
	}
	if got := v.boost["dashwood"]; got != floorLog10(0.5) {
		t.Errorf("dashwood floor %v", got)
	}
	if _, ok := v.boost["counselled"]; ok {
		t.Error("intensity 0 boosted")
	}
	var problems []string
	for _, p := range v.problems {
		problems = append(problems, p.Error())
	}
	all := strings.Join(problems, "\n")
	for _, frag := range []string{`"Q" is not a phone of the model`, "one-word values only", `"1234" is not in the dictionary and has no letters`} {
		if !strings.Contains(all, frag) {
			t.Errorf("problems do not say %q:\n%s", frag, all)
		}
	}
	if len(problems) != 3 {
		t.Errorf("%d problems, want 3:\n%s", len(problems), all)
	}
	if w := lx.resolveVocabulary([]recognizer.VocabularyWord{{Value: "dashwood"}}); w != nil {
		t.Errorf("a known word at intensity 0 changes nothing, got %+v", w)
	}
	if a, b := lx.resolveVocabulary([]recognizer.VocabularyWord{{Value: "Dashwood", Intensity: 0.5}}),
		lx.resolveVocabulary([]recognizer.VocabularyWord{{Value: "dashwood!", Intensity: 0.5}}); a.key != b.key {
		t.Error("same vocabulary, different keys")
	}
	// The unigram model holds the boosted words and every new word (the
	// dictionary reload adds no word to the n-gram model): new words
	// without intensity at the floor of intensity 0; alternates of known
	// words (carl) need nothing.
	arpa := v.arpa(6.5)
	for _, w := range []string{"dashwood", "zorblax", "counselled", "quentaro", "quorvix"} {
		if !strings.Contains(arpa, " "+w+"\n") {
			t.Errorf("arpa lacks %s:\n%s", w, arpa)
		}
	}
	lift := -math.Log10(vocabularyLambda) / 6.5
	if !strings.Contains(arpa, "ngram 1=5") || strings.Contains(arpa, " carl\n") ||
		!strings.Contains(arpa, fmt.Sprintf("%.4f counselled\n", floorLog10(0)+lift)) {
		t.Errorf("arpa:\n%s", arpa)
	}
}

func TestFloorLog10(t *testing.T) {
	tests := []struct{ in, want float64 }{{0, -5}, {0.5, -3.5}, {1, -2}, {-1, -5}, {2, -2}}
	for _, tt := range tests {
		if got := floorLog10(tt.in); got != tt.want {
			t.Errorf("floorLog10(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// TestVocabularyStreams checks streams with a vocabulary of new words
// open (PocketSphinx accepts the letter-to-sound phones) and that
// CheckVocabulary reports what is left out.
func TestVocabularyStreams(t *testing.T) {
	e := newEngine(t, 1)
	v := []recognizer.VocabularyWord{{Value: "counselled", Intensity: 0.3}, {Value: "zorblax", Pronunciations: []string{"Z AO R B L AE K S", "Z QQ"}}}
	st, err := e.NewStream(t.Context(), recognizer.StreamOptions{Vocabulary: v})
	if err != nil {
		t.Fatal(err)
	}
	if len(e.idle) != 0 {
		t.Error("idle decoder while the only one is checked out")
	}
	st.Close()
	probs := e.CheckVocabulary(v)
	if len(probs) != 1 || !strings.Contains(probs[0].Error(), `"QQ" is not a phone of the model`) {
		t.Errorf("problems %v", probs)
	}
	if probs := e.CheckVocabulary([]recognizer.VocabularyWord{{Value: "modern", Intensity: 1}}); probs != nil {
		t.Errorf("problems %v for a plain word", probs)
	}
}
