package summarize

import (
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/addons/sentences"
)

// Summary types, as spelled in SPEC.md summarization_config.type.
const (
	TypeGeneral      = "general"
	TypeBulletPoints = "bullet_points"
	TypeConcise      = "concise"
)

// TextRank tuning.
const (
	damping       = 0.85
	maxIterations = 200
	tolerance     = 1e-9
	minWords      = 4   // shorter sentences are chosen only when nothing else is
	duplicate     = 0.7 // cosine above which a candidate repeats a chosen sentence
	maxGeneral    = 10  // sentences in a general summary
	maxBullets    = 8
)

// Summarize returns an extractive summary of utts (see the package
// comment); typ is "general", "bullet_points" or "concise", anything else
// counting as "general". It returns "" for a transcript without words.
func Summarize(utts []recognizer.Utterance, typ string) string {
	ss := sentences.Split(utts)
	if len(ss) == 0 {
		return ""
	}
	texts := make([]string, len(ss))
	for i, s := range ss {
		texts[i] = s.Text
	}
	var n int
	switch typ {
	case TypeConcise:
		n = 1
		if len(ss) > 4 {
			n = 2
		}
	case TypeBulletPoints:
		n = min(max(3, (len(ss)+4)/5), maxBullets)
	default:
		n = min(max(3, (len(ss)+4)/5), maxGeneral)
	}
	chosen := pick(texts, n)
	out := make([]string, len(chosen))
	for i, k := range chosen {
		out[i] = format(texts[k])
	}
	if typ == TypeBulletPoints {
		return "- " + strings.Join(out, "\n- ")
	}
	return strings.Join(out, " ")
}

// pick returns the indexes of the n best sentences by TextRank, in order,
// skipping near-duplicates and short sentences while others remain.
func pick(texts []string, n int) []int {
	bags := make([]map[string]float64, len(texts))
	for i, t := range texts {
		bags[i] = bag(terms(t))
	}
	scores := textRank(bags)
	order := make([]int, len(texts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		// Higher score first; ties keep spoken order.
		switch {
		case scores[a] > scores[b]:
			return -1
		case scores[a] < scores[b]:
			return 1
		}
		return 0
	})
	var chosen []int
	for pass := 0; pass < 2 && len(chosen) < n; pass++ {
		for _, k := range order {
			if len(chosen) >= n {
				break
			}
			if slices.Contains(chosen, k) {
				continue
			}
			if pass == 0 && len(strings.Fields(texts[k])) < minWords {
				continue
			}
			if pass == 0 && slices.ContainsFunc(chosen, func(c int) bool { return cosine(bags[c], bags[k]) > duplicate }) {
				continue
			}
			chosen = append(chosen, k)
		}
	}
	slices.Sort(chosen)
	return chosen
}

// bag counts the stems of a term list.
func bag(ts []term) map[string]float64 {
	m := map[string]float64{}
	for _, t := range ts {
		if t.stem != "" {
			m[t.stem]++
		}
	}
	return m
}

func cosine(a, b map[string]float64) float64 {
	var dot, na, nb float64
	for k, v := range a {
		dot += v * b[k]
		na += v * v
	}
	for _, v := range b {
		nb += v * v
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// format capitalises a sentence and ends it with a full stop when it has
// no final punctuation.
func format(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return s
	}
	r, size := utf8.DecodeRuneInString(s)
	s = string(unicode.ToUpper(r)) + s[size:]
	if !strings.ContainsAny(s[len(s)-1:], ".?!") {
		s = strings.TrimRight(s, ",;:") + "."
	}
	return s
}
