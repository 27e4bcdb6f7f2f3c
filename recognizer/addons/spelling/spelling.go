package spelling

import (
	"cmp"
	"slices"
	"strings"

	"github.com/earshot-dev/earshot/recognizer"
)

// entry is one variant: its normalised words and the key that replaces it.
type entry struct {
	words []string
	key   string
}

// Apply returns copies of utts with each variant of dict written as its
// key (see the package comment). Empty keys and variants are ignored.
func Apply(utts []recognizer.Utterance, dict map[string][]string) []recognizer.Utterance {
	byFirst := index(dict)
	out := make([]recognizer.Utterance, len(utts))
	for i, u := range utts {
		out[i] = u
		if len(u.Words) == 0 {
			if u.Text != "" {
				out[i].Text = applyText(u.Text, byFirst)
			}
			continue
		}
		out[i].Words = applyWords(u.Words, byFirst)
		texts := make([]string, len(out[i].Words))
		var conf float64
		for k, w := range out[i].Words {
			texts[k] = w.Word
			conf += w.Confidence
		}
		out[i].Text = strings.Join(texts, " ")
		out[i].Confidence = conf / float64(len(out[i].Words))
	}
	return out
}

// index groups the dictionary's variants by their first word, longest
// first, then by key.
func index(dict map[string][]string) map[string][]entry {
	byFirst := map[string][]entry{}
	for key, variants := range dict {
		if strings.TrimSpace(key) == "" {
			continue
		}
		for _, v := range append([]string{key}, variants...) {
			ws := strings.Fields(v)
			for k := range ws {
				ws[k] = normalize(ws[k])
			}
			ws = slices.DeleteFunc(ws, func(w string) bool { return w == "" })
			if len(ws) == 0 {
				continue
			}
			byFirst[ws[0]] = append(byFirst[ws[0]], entry{ws, key})
		}
	}
	for _, es := range byFirst {
		slices.SortFunc(es, func(a, b entry) int {
			return cmp.Or(cmp.Compare(len(b.words), len(a.words)), cmp.Compare(a.key, b.key),
				slices.Compare(a.words, b.words))
		})
	}
	return byFirst
}

// match returns the entry matching norms at their start, if any.
func match(norms []string, byFirst map[string][]entry) (entry, bool) {
	if len(norms) == 0 {
		return entry{}, false
	}
	for _, e := range byFirst[norms[0]] {
		if len(e.words) <= len(norms) && slices.Equal(e.words, norms[:len(e.words)]) {
			return e, true
		}
	}
	return entry{}, false
}

func applyWords(words []recognizer.Word, byFirst map[string][]entry) []recognizer.Word {
	norms := make([]string, len(words))
	for i, w := range words {
		norms[i] = normalize(w.Word)
	}
	out := make([]recognizer.Word, 0, len(words))
	for i := 0; i < len(words); {
		e, ok := match(norms[i:], byFirst)
		// A phrase may not run through punctuation that ends a word
		// inside it ("york. new" is not "york new").
		if ok && len(e.words) > 1 {
			for k := i; k < i+len(e.words)-1; k++ {
				if trailing(words[k].Word) != "" {
					ok = false
				}
			}
		}
		if !ok {
			out = append(out, words[i])
			i++
			continue
		}
		run := words[i : i+len(e.words)]
		var conf float64
		for _, w := range run {
			conf += w.Confidence
		}
		out = append(out, recognizer.Word{
			Word:       leading(run[0].Word) + e.key + trailing(run[len(run)-1].Word),
			Start:      run[0].Start,
			End:        run[len(run)-1].End,
			Confidence: conf / float64(len(run)),
		})
		i += len(e.words)
	}
	return out
}

func applyText(text string, byFirst map[string][]entry) string {
	f := strings.Fields(text)
	words := make([]recognizer.Word, len(f))
	for i, w := range f {
		words[i].Word = w
	}
	var out []string
	for _, w := range applyWords(words, byFirst) {
		out = append(out, w.Word)
	}
	return strings.Join(out, " ")
}

func isPunct(r rune) bool { return strings.ContainsRune(`.,?!;:"'()[]¿¡«»`, r) }

// normalize lower-cases a word and strips surrounding punctuation.
func normalize(w string) string { return strings.ToLower(strings.TrimFunc(w, isPunct)) }

func leading(w string) string { return w[:len(w)-len(strings.TrimLeftFunc(w, isPunct))] }

func trailing(w string) string { return w[len(strings.TrimRightFunc(w, isPunct)):] }
