package sphinx

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/earshot-dev/earshot/recognizer"
)

// How a vocabulary item's intensity becomes language-model weight.
//
// PocketSphinx scores a word w after history h with lw*log P(w|h) (lw, the
// -lw language weight, is 6.5 for the en-us model). A stream with a
// vocabulary decodes with the interpolation
//
//	(1-λ)·P(w|h)^lw + λ·Q(w)^lw
//
// of its own n-gram model P and a unigram model Q holding the vocabulary
// words (sets of PocketSphinx models mix weighted scores, hence the
// powers). With λ = vocabularyLambda (0.01) every other word loses
// log(1-λ) = 0.01 nats, nothing, and a vocabulary word scores as if
// P(w|h) were at least floor(intensity) = λ^(1/lw)·Q(w): Q is set so that
// this floor is
//
//	log10 floor = -5 + 3·intensity
//
// fixed from what the probabilities mean, not from test audio: intensity
// near 0 gives 1e-5, the unigram probability of a rare word in a
// vocabulary of about 100 000 words (about where PocketSphinx puts a word
// it adds to the dictionary, 1/n), so it changes little; 1 gives 1e-2, the
// probability of a common function word, in every context, so acoustics
// alone decide whether it is said. 0.5 (3e-4) treats the word as an
// everyday content word. Intensity 0 adds the word without a floor.
// Contexts where the model already predicts the word more strongly keep
// their probability: the floor never lowers anything.
const (
	minFloorLog10 = -5.0
	maxFloorLog10 = -2.0
)

// floorLog10 is the floor of a vocabulary word's probability (log10).
func floorLog10(intensity float64) float64 {
	return minFloorLog10 + min(max(intensity, 0), 1)*(maxFloorLog10-minFloorLog10)
}

// lexicon is the pronunciation dictionary the decoders load (Config.Dict),
// read once so that vocabularies are resolved without a decoder: which
// words are known, their pronunciations (for respellings), and the phone
// set (for pronunciations given as phones).
type lexicon struct {
	prons  map[string]string // entry ("word", "word(2)") → phones
	phones map[string]bool
}

// lexiconFile is the lexicon of a dictionary file, read at its first use
// (a vocabulary, resolved by NewStream or CheckVocabulary) and kept.
// Read at every start before, its 134,723 entries took 0.3 CPU s and
// 26 MB of peak RSS (a daemon's start on the e2e tests' settings: 0.7 →
// 0.4 CPU s, 89 → 63 MB, 2026-12-02), on a box whose requests may never
// bring a vocabulary (and at each of the e2e tests' some 180 daemon
// starts). The pools of one dictionary and language model share one
// (newEngineLike). Safe for concurrent use.
type lexiconFile struct {
	load func() (*lexicon, error)
}

// newLexiconFile is the lexicon of the dictionary at path, not yet read.
func newLexiconFile(path string) *lexiconFile {
	return &lexiconFile{load: sync.OnceValues(func() (*lexicon, error) { return loadLexicon(path) })}
}

// get reads the lexicon on the first call and returns it (or the first
// call's error) on every call.
func (f *lexiconFile) get() (*lexicon, error) { return f.load() }

// loadLexicon reads a CMU-format dictionary: "word PH ON ES" per line.
func loadLexicon(path string) (*lexicon, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("sphinx: dict: %w", err)
	}
	defer f.Close()
	lx := &lexicon{prons: make(map[string]string, 1<<17), phones: map[string]bool{}}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		word, phones, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok || word == "" {
			continue
		}
		phones = strings.Join(strings.Fields(phones), " ")
		lx.prons[word] = phones
		for p := range strings.FieldsSeq(phones) {
			lx.phones[p] = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("sphinx: dict: %w", err)
	}
	if len(lx.prons) == 0 {
		return nil, fmt.Errorf("sphinx: dict: %s has no entries", path)
	}
	return lx, nil
}

// entry is a word to add to a decoder's dictionary.
type entry struct {
	word   string // "word" or an alternate "word(2)"
	phones []string
}

// Bounds on what a vocabulary may put into a decoder. A request is
// checked against its own limits first (params); these hold for any
// caller, so nothing unbounded reaches the C library.
const (
	maxVocabularyWords = 2000 // distinct words of one vocabulary
	maxWordBytes       = 64   // bytes of one word
	maxPhones          = 40   // phones of one pronunciation
)

// vocabulary is a stream's custom vocabulary resolved against the lexicon.
type vocabulary struct {
	key      string             // identifies what is applied to a decoder
	add      []entry            // dictionary entries to add, in order
	fresh    map[string]bool    // words of add the dictionary did not have
	boost    map[string]float64 // word → log10 floor of its probability
	problems []error            // what was left out, and why
	lex      *lexicon           // what it was resolved against
}

// resolveVocabulary turns vocabulary items into dictionary entries and
// probability floors. Values are lower-cased and split into words at
// spaces and hyphens; punctuation around words is dropped. A word the
// dictionary lacks gets its pronunciations from the item (only for a
// one-word value), else from its spelling (letterToSound). Pronunciations
// are phones of the model ("K AA1 R L", upper case; stress digits are
// dropped) or respellings ("karl", said like the dictionary's or spelled
// words); they are added as alternates of known words too. Anything that
// cannot be used is left out and reported in problems. It returns nil when
// nothing is left to apply.
func (lx *lexicon) resolveVocabulary(items []recognizer.VocabularyWord) *vocabulary {
	v := &vocabulary{boost: map[string]float64{}, fresh: map[string]bool{}, lex: lx}
	added := map[string]bool{}
	for _, it := range items {
		words, bad := splitWords(it.Value), ""
		words = slices.DeleteFunc(words, func(w string) bool {
			if validWord(w) {
				return false
			}
			bad = w
			return true
		})
		if bad != "" {
			v.problems = append(v.problems, fmt.Errorf("sphinx: vocabulary %q: %q left out: a word is at most %d bytes of letters, digits, apostrophes and periods", it.Value, bad, maxWordBytes))
		}
		if len(added)+len(words) > maxVocabularyWords {
			v.problems = append(v.problems, fmt.Errorf("sphinx: vocabulary %q left out: a vocabulary holds at most %d words", it.Value, maxVocabularyWords))
			continue
		}
		if len(words) == 0 {
			v.problems = append(v.problems, fmt.Errorf("sphinx: vocabulary %q: no word in it", it.Value))
			continue
		}
		if len(words) > 1 && len(it.Pronunciations) > 0 {
			v.problems = append(v.problems, fmt.Errorf("sphinx: vocabulary %q: pronunciations ignored: they apply to one-word values only", it.Value))
		}
		for _, w := range words {
			var prons [][]string
			if len(words) == 1 {
				for _, p := range it.Pronunciations {
					phones, err := lx.pronunciation(p)
					if err != nil {
						v.problems = append(v.problems, fmt.Errorf("sphinx: vocabulary %q: %w", it.Value, err))
						continue
					}
					prons = append(prons, phones)
				}
			}
			_, known := lx.prons[w]
			if !known && !added[w] && len(prons) == 0 {
				phones := lx.known(letterToSound(w))
				if len(phones) == 0 {
					v.problems = append(v.problems, fmt.Errorf("sphinx: vocabulary %q: %q is not in the dictionary and has no letters to pronounce", it.Value, w))
					continue
				}
				prons = append(prons, phones)
			}
			if !known && !added[w] {
				v.fresh[w] = true
			}
			v.addPronunciations(lx, w, known || added[w], prons)
			added[w] = true
			if it.Intensity > 0 {
				f := floorLog10(it.Intensity)
				if old, ok := v.boost[w]; ok {
					f = max(f, old)
				}
				v.boost[w] = f
			}
		}
	}
	if len(v.add) == 0 && len(v.boost) == 0 {
		return nil
	}
	v.key = v.makeKey()
	return v
}

// dictionaryEntries returns the entries a decoder needs added for v,
// when has tells which words its dictionary has: first v's lexicon's own
// entries ("w", "w(2)"...) of v's words it lacks (a decoder loads only its
// language model's words, searchDictionary, and an alternate needs its
// word's first entry), then v's.
func (v *vocabulary) dictionaryEntries(has func(string) bool) []entry {
	lx := v.lex
	words := map[string]bool{}
	for _, e := range v.add {
		w, _, _ := strings.Cut(e.word, "(")
		words[w] = true
	}
	for w := range v.boost {
		words[w] = true
	}
	var add []entry
	for _, w := range slices.Sorted(maps.Keys(words)) {
		if _, ok := lx.prons[w]; !ok || has(w) {
			continue
		}
		for n := 1; ; n++ {
			name := entryName(w, n)
			p, ok := lx.prons[name]
			if !ok {
				break
			}
			add = append(add, entry{word: name, phones: strings.Fields(p)})
		}
	}
	return append(add, v.add...)
}

// entryName is the dictionary name of w's nth pronunciation: "w" for the
// first, "w(n)" for the alternates.
func entryName(w string, n int) string {
	if n == 1 {
		return w
	}
	return fmt.Sprintf("%s(%d)", w, n)
}

// addPronunciations adds prons of w that the dictionary (or v) does not
// have yet: the first as w itself when w is new, the others as alternates
// "w(2)", "w(3)"... numbered after the existing ones.
func (v *vocabulary) addPronunciations(lx *lexicon, w string, exists bool, prons [][]string) {
	have := func(name string) (string, bool) {
		if p, ok := lx.prons[name]; ok {
			return p, true
		}
		for _, e := range v.add {
			if e.word == name {
				return strings.Join(e.phones, " "), true
			}
		}
		return "", false
	}
	n := 0 // entries of w so far
	var existing []string
	if exists {
		for n = 1; ; n++ {
			name := entryName(w, n)
			p, ok := have(name)
			if !ok {
				n--
				break
			}
			existing = append(existing, p)
		}
	}
	for _, phones := range prons {
		joined := strings.Join(phones, " ")
		if slices.Contains(existing, joined) {
			continue
		}
		existing = append(existing, joined)
		n++
		name := entryName(w, n)
		v.add = append(v.add, entry{word: name, phones: phones})
	}
}

// pronunciation parses one item pronunciation: phones when every field is
// upper case (a stress digit allowed), else a respelling.
func (lx *lexicon) pronunciation(p string) ([]string, error) {
	fields := strings.Fields(p)
	if len(fields) == 0 {
		return nil, fmt.Errorf("pronunciation %q is empty", p)
	}
	if isPhoneNotation(fields) {
		if len(fields) > maxPhones {
			return nil, fmt.Errorf("pronunciation %q ignored: more than %d phones", p, maxPhones)
		}
		out := make([]string, 0, len(fields))
		for _, f := range fields {
			ph := strings.TrimRight(f, "012")
			if !lx.phones[ph] {
				return nil, fmt.Errorf("pronunciation %q ignored: %q is not a phone of the model", p, f)
			}
			out = append(out, ph)
		}
		return out, nil
	}
	var out []string
	for _, w := range splitWords(p) {
		if ph, ok := lx.prons[w]; ok {
			out = append(out, strings.Fields(ph)...)
			continue
		}
		ph := lx.known(letterToSound(w))
		if len(ph) == 0 {
			return nil, fmt.Errorf("pronunciation %q ignored: %q has no letters to pronounce", p, w)
		}
		out = append(out, ph...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("pronunciation %q ignored: no word in it", p)
	}
	if len(out) > maxPhones {
		return nil, fmt.Errorf("pronunciation %q ignored: more than %d phones", p, maxPhones)
	}
	return out, nil
}

// known returns phones cut to maxPhones, or nil when one of them is not a
// phone of the model.
func (lx *lexicon) known(phones []string) []string {
	phones = phones[:min(len(phones), maxPhones)]
	for _, p := range phones {
		if !lx.phones[p] {
			return nil
		}
	}
	return phones
}

// validWord reports whether w can be a dictionary and language-model
// word: valid UTF-8 of at most maxWordBytes bytes, letters, digits,
// apostrophes and periods only (no space, control character, bracket or
// the "(2)" suffix of alternates).
func validWord(w string) bool {
	if w == "" || len(w) > maxWordBytes || !utf8.ValidString(w) {
		return false
	}
	for _, r := range w {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '.' {
			return false
		}
	}
	return true
}

// isPhoneNotation reports whether every field looks like an ARPAbet phone:
// upper-case letters, then at most one stress digit.
func isPhoneNotation(fields []string) bool {
	for _, f := range fields {
		body := strings.TrimRight(f, "012")
		if body == "" || len(f)-len(body) > 1 {
			return false
		}
		for _, r := range body {
			if r < 'A' || r > 'Z' {
				return false
			}
		}
	}
	return true
}

// splitWords lower-cases s and splits it into dictionary words at spaces
// and hyphens, trimming other punctuation around each word; words with
// characters the dictionary format cannot hold (parentheses) are dropped.
func splitWords(s string) []string {
	var out []string
	for f := range strings.FieldsFuncSeq(strings.ToLower(s), func(r rune) bool { return unicode.IsSpace(r) || r == '-' }) {
		w := strings.TrimFunc(f, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' })
		w = strings.Trim(w, "'")
		if w == "" || strings.ContainsAny(w, "()") {
			continue
		}
		out = append(out, w)
	}
	return out
}

// arpa is the unigram model of the boosted and the new words in ARPA
// format: each at the log10 probability that the interpolation weight
// lambda brings to its floor with language weight lw (see the comment on
// minFloorLog10); a new word without a boost gets the floor of intensity
// 0, about the probability PocketSphinx gives a word it adds itself.
// It is "" when there is no such word (v only adds pronunciations).
func (v *vocabulary) arpa(lw float64) string {
	floors := maps.Clone(v.boost)
	for w := range v.fresh {
		if _, ok := floors[w]; !ok {
			floors[w] = floorLog10(0)
		}
	}
	if len(floors) == 0 {
		return ""
	}
	words := slices.Sorted(maps.Keys(floors))
	var b strings.Builder
	fmt.Fprintf(&b, "\\data\\\nngram 1=%d\n\n\\1-grams:\n", len(words))
	lift := -math.Log10(vocabularyLambda) / lw
	for _, w := range words {
		fmt.Fprintf(&b, "%.4f %s\n", min(floors[w]+lift, 0), w)
	}
	b.WriteString("\n\\end\\\n")
	return b.String()
}

// makeKey identifies the entries and floors, so decoders holding the same
// vocabulary are reused.
func (v *vocabulary) makeKey() string {
	h := sha256.New()
	for _, e := range v.add {
		fmt.Fprintf(h, "+%s\t%s\n", e.word, strings.Join(e.phones, " "))
	}
	words := make([]string, 0, len(v.boost))
	for w := range v.boost {
		words = append(words, w)
	}
	slices.Sort(words)
	for _, w := range words {
		fmt.Fprintf(h, "^%s\t%.4f\n", w, v.boost[w])
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}
