package sphinx

import (
	"context"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/earshot-dev/earshot/recognizer"
)

// crashVocabularies are the custom_vocabulary requests that crashed the
// daemon with SIGSEGV in ps_process_raw (issue 13, finding 1): words added
// with ps_add_word went into PocketSphinx's trie language model, whose
// unigram table they corrupted. Before the fix this test died in about
// half of its decodes.
func crashVocabularies() map[string][]recognizer.VocabularyWord {
	items := func(n int, pron string) []recognizer.VocabularyWord {
		out := make([]recognizer.VocabularyWord, n)
		for i := range out {
			out[i] = recognizer.VocabularyWord{Value: "word" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune('a'+i/26%26)),
				Intensity: 0.5, Pronunciations: []string{pron}}
		}
		return out
	}
	var homophones []recognizer.VocabularyWord
	for _, w := range []string{"Kah", "Kaa", "Cah", "Caa", "Khaa", "Kha", "Qah"} {
		homophones = append(homophones, recognizer.VocabularyWord{Value: w, Intensity: 0.5})
	}
	return map[string][]recognizer.VocabularyWord{
		"homophones": homophones,
		"5 K AA":     items(5, "K AA"),
		"10 G OW":    items(10, "G OW"),
		"1000 K AA":  items(1000, "K AA"),
	}
}

// TestVocabularyCrashRequests decodes a real clip three times with each
// vocabulary that crashed the process; every decode must finish.
func TestVocabularyCrashRequests(t *testing.T) {
	e := newEngine(t, 1)
	c := manifestClip(t, "ljspeech-LJ001-0002.wav")
	base := transcribe(t, e, c.Path)
	for name, v := range crashVocabularies() {
		t.Run(name, func(t *testing.T) {
			for range 3 {
				got := transcribe(t, e, c.Path, v...)
				t.Logf("%q", got)
			}
			if after := transcribe(t, e, c.Path); after != base {
				t.Errorf("after the vocabulary the pool decodes %q, baseline %q", after, base)
			}
		})
	}
}

// TestVocabularyBounds: what a caller other than the request layer hands
// the engine is bounded before it reaches the C library.
func TestVocabularyBounds(t *testing.T) {
	lx, err := newEngine(t, 1).lex.get()
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("k", maxWordBytes+1)
	v := lx.resolveVocabulary([]recognizer.VocabularyWord{
		{Value: long},
		{Value: "a\x00b"},
		{Value: "zorblax", Pronunciations: []string{strings.Repeat("K AA ", maxPhones+1)}},
		{Value: "blorf", Pronunciations: []string{"K AA QQ"}},
	})
	for _, e := range v.add {
		if !validWord(strings.TrimSuffix(strings.SplitN(e.word, "(", 2)[0], ")")) || len(e.phones) > maxPhones || len(e.phones) == 0 {
			t.Errorf("entry %q /%v/ reaches the decoder", e.word, e.phones)
		}
		for _, p := range e.phones {
			if !lx.phones[p] {
				t.Errorf("entry %q: phone %q is not the model's", e.word, p)
			}
		}
	}
	if len(v.problems) < 4 {
		t.Errorf("problems %v: want one per bad item", v.problems)
	}
	var many []recognizer.VocabularyWord
	for i := range maxVocabularyWords + 10 {
		many = append(many, recognizer.VocabularyWord{Value: "w" + strings.Repeat("q", i%5) + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676%26))})
	}
	if v := lx.resolveVocabulary(many); len(v.add) > maxVocabularyWords || len(v.problems) == 0 {
		t.Errorf("%d words resolved (%d problems), at most %d", len(v.fresh), len(v.problems), maxVocabularyWords)
	}
}

// FuzzVocabulary drives the real decoder with generated vocabularies: any
// words, pronunciations (phones or respellings) and intensities, applied
// to a pooled decoder that then decodes a second of real speech.
func FuzzVocabulary(f *testing.F) {
	f.Add("Kah Kaa Cah Caa Khaa Kha Qah", "", 0.5)
	f.Add("alpha beta gamma delta", "K AA", 0.5)
	f.Add("go went gone goes", "G OW", 1.0)
	f.Add("modern", "", 0.0)
	f.Add("read read reed", "R EH D", 0.3)
	f.Add("x y z", "AA AA AA AA AA", 0.9)
	e, err := func() (*Engine, error) {
		cfg := Config{Decoders: 1}
		cfg.SetDefaults()
		return New(cfg, recognizer.NewCPU(cfg.LiveDecodes), nil)
	}()
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { e.Close() })
	var pcm []int16
	f.Fuzz(func(t *testing.T, words, pron string, intensity float64) {
		if pcm == nil {
			_, all := clip(t, "ljspeech-LJ001-0002.wav")
			pcm = all[:min(len(all), recognizer.SampleRate)]
		}
		if !utf8.ValidString(words) || !utf8.ValidString(pron) {
			return
		}
		var v []recognizer.VocabularyWord
		for w := range strings.FieldsSeq(words) {
			it := recognizer.VocabularyWord{Value: w, Intensity: intensity}
			if pron != "" {
				it.Pronunciations = []string{pron}
			}
			v = append(v, it)
			if len(v) == 50 {
				break
			}
		}
		st, err := e.NewStream(context.Background(), recognizer.StreamOptions{Vocabulary: v})
		if err != nil {
			return // refused vocabularies are fine; crashes are not
		}
		defer st.Close()
		if err := st.Write(pcm); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Finish(); err != nil {
			t.Fatal(err)
		}
	})
}

// rssMB is this process's resident memory in MB (Linux).
func rssMB(t *testing.T) float64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status:", err)
	}
	for l := range strings.Lines(string(b)) {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	t.Skip("no VmRSS")
	return 0
}

// TestVocabularySwapMemoryBounded: streams whose vocabularies differ make
// the pool free and load decoders over and over (the hostile soak sent one
// such job every 10 s). The C heap that freed decoders leave behind is
// handed back (malloc_trim), so resident memory stays flat. Before that the
// process grew by about 15 MB a round here, and the daemon reached 1.6 GB
// in a 10-minute soak. Each stream decodes the clip's first 0.1 s: the
// swaps are what grow the heap, not the audio. Measured 2026-12-01: with
// 0.5 s, 27 to 50 CPU s and -10 to 44 MB of growth over 12 rounds; with
// 0.1 s, 12 to 19 CPU s and -22 to 53 MB; with 0.1 s and malloc_trim
// taken out, 588 MB (0.5 s: 313 MB).
func TestVocabularySwapMemoryBounded(t *testing.T) {
	e := newEngine(t, 2)
	_, all := clip(t, "ljspeech-LJ001-0002.wav")
	pcm := all[:recognizer.SampleRate/10]
	vs := crashVocabularies()
	names := slices.Sorted(maps.Keys(vs))
	round := func(i int) {
		var wg sync.WaitGroup
		for k := range 2 {
			wg.Go(func() {
				st, err := e.NewStream(t.Context(), recognizer.StreamOptions{Vocabulary: vs[names[(i+k)%len(names)]]})
				if err != nil {
					t.Error(err)
					return
				}
				defer st.Close()
				st.Write(pcm)
				st.Finish()
			})
		}
		wg.Wait()
	}
	for i := range 4 {
		round(i)
	}
	warm := rssMB(t)
	const rounds = 12
	for i := range rounds {
		round(i)
	}
	grown := rssMB(t) - warm
	t.Logf("RSS after warm-up %.0f MB, grew %.0f MB over %d rounds of vocabulary swaps", warm, grown, rounds)
	if grown > 60 {
		t.Errorf("resident memory grew %.0f MB over %d rounds (bound 60 MB): freed decoders are not handed back", grown, rounds)
	}
}
