package summarize

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/addons/sentences"
)

// Chapter is one topic segment of a transcript (PROTOCOL chapterization
// results). Chapters are contiguous: each ends where the next starts, the
// first starts at the first word and the last ends at the last word.
type Chapter struct {
	Headline string   `json:"headline"`
	Gist     string   `json:"gist"`
	Summary  string   `json:"summary"`
	Keywords []string `json:"keywords"`
	Start    float64  `json:"start"`
	End      float64  `json:"end"`
}

// TextTiling tuning; the package comment explains it.
const (
	window          = 3    // sentences each side of a gap
	minChapterSents = 4    // sentences
	minChapterSecs  = 30.0 // seconds
	maxKeywords     = 5
)

// Chapters splits utts into topic chapters (see the package comment). A
// transcript without words has none; one too short to split is one
// chapter.
func Chapters(utts []recognizer.Utterance) []Chapter {
	ss := sentences.Split(utts)
	if len(ss) == 0 {
		return nil
	}
	bags := make([]map[string]float64, len(ss))
	termLists := make([][]term, len(ss))
	for i, s := range ss {
		termLists[i] = terms(s.Text)
		bags[i] = bag(termLists[i])
	}
	cuts := tile(ss, bags)
	bounds := append(append([]int{0}, cuts...), len(ss))

	// Document frequency of stems and phrases over sentences, for idf.
	df := map[string]int{}
	for _, ts := range termLists {
		seen := map[string]bool{}
		for _, k := range keys(ts) {
			if !seen[k.stem] {
				seen[k.stem] = true
				df[k.stem]++
			}
		}
	}

	var out []Chapter
	for c := 0; c+1 < len(bounds); c++ {
		a, b := bounds[c], bounds[c+1]
		var texts []string
		var ts [][]term
		for i := a; i < b; i++ {
			texts = append(texts, ss[i].Text)
			ts = append(ts, termLists[i])
		}
		kw := keywords(ts, df, len(ss))
		ch := Chapter{Keywords: kw, Start: ss[a].Start, End: ss[b-1].End}
		if len(kw) > 0 {
			ch.Gist = capitalise(kw[0])
			ch.Headline = capitalise(list(kw[:min(3, len(kw))]))
		} else {
			ch.Gist = format(texts[0])
			ch.Headline = ch.Gist
		}
		n := min(3, max(1, (b-a+2)/4))
		var sum []string
		for _, k := range pick(texts, n) {
			sum = append(sum, format(texts[k]))
		}
		ch.Summary = strings.Join(sum, " ")
		out = append(out, ch)
	}
	// Make chapters contiguous and ordered even when sentences of several
	// channels overlap.
	for i := range out {
		if i+1 < len(out) {
			out[i].End = out[i+1].Start
		} else {
			for _, s := range ss {
				out[i].End = max(out[i].End, s.End)
			}
		}
		if i > 0 {
			out[i].Start = out[i-1].End
		}
	}
	return out
}

// tile returns the sentence indexes where a new chapter starts.
func tile(ss []sentences.Sentence, bags []map[string]float64) []int {
	n := len(ss)
	if n < 2*minChapterSents {
		return nil
	}
	// Similarity across each gap g (between sentence g-1 and g).
	sim := make([]float64, n)
	for g := 1; g < n; g++ {
		left, right := map[string]float64{}, map[string]float64{}
		for i := max(0, g-window); i < g; i++ {
			for k, v := range bags[i] {
				left[k] += v
			}
		}
		for i := g; i < min(n, g+window); i++ {
			for k, v := range bags[i] {
				right[k] += v
			}
		}
		sim[g] = cosine(left, right)
	}
	// The depth of gap g is how far sim climbs from it to the nearest
	// peak on each side. A climb from g that steps to g-1 goes on as the
	// climb from g-1, so each side's peaks take one pass (not a climb per
	// gap, which is n² on a long slope).
	left, right := make([]float64, n), make([]float64, n)
	for g := 1; g < n; g++ {
		left[g] = sim[g]
		if g > 1 && sim[g-1] >= sim[g] {
			left[g] = left[g-1]
		}
	}
	for g := n - 1; g >= 1; g-- {
		right[g] = sim[g]
		if g+1 < n && sim[g+1] >= sim[g] {
			right[g] = right[g+1]
		}
	}
	depth := make([]float64, n)
	var ds []float64
	for g := 1; g < n; g++ {
		depth[g] = (left[g] - sim[g]) + (right[g] - sim[g])
		ds = append(ds, depth[g])
	}
	mean, sd := meanSD(ds)
	cutoff := mean - sd/2
	order := make([]int, 0, n)
	for g := 1; g < n; g++ {
		if depth[g] > cutoff && depth[g] > 0 {
			order = append(order, g)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(depth[b], depth[a]) })
	ok := func(a, b int) bool { // sentences a..b-1 can be a chapter
		return b-a >= minChapterSents && ss[b-1].End-ss[a].Start >= minChapterSecs
	}
	// Deepest first, a cut is taken when both chapters it leaves fit.
	// Only the chapter it splits changes, and every other chapter fits
	// (before the first cut there is no other), so checking those two is
	// checking them all.
	var cuts []int // sorted
	for _, g := range order {
		i, _ := slices.BinarySearch(cuts, g)
		a, b := 0, n
		if i > 0 {
			a = cuts[i-1]
		}
		if i < len(cuts) {
			b = cuts[i]
		}
		if ok(a, g) && ok(g, b) {
			cuts = slices.Insert(cuts, i, g)
		}
	}
	return cuts
}

func meanSD(xs []float64) (float64, float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	var m float64
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	var v float64
	for _, x := range xs {
		v += (x - m) * (x - m)
	}
	return m, math.Sqrt(v / float64(len(xs)))
}

// keys returns a sentence's keyword candidates: its content words and its
// two-word phrases of adjacent content words.
func keys(ts []term) []term {
	var out []term
	for i, t := range ts {
		if t.stem == "" {
			continue
		}
		out = append(out, t)
		if i+1 < len(ts) && ts[i+1].stem != "" {
			out = append(out, term{t.stem + " " + ts[i+1].stem, t.surface + " " + ts[i+1].surface})
		}
	}
	return out
}

// keywords ranks a chapter's candidates by tf-idf over the transcript's
// sentences; a phrase must occur twice and then replaces its words.
func keywords(chapter [][]term, df map[string]int, sentencesTotal int) []string {
	tf := map[string]float64{}
	surfaces := map[string]map[string]int{}
	for _, ts := range chapter {
		for _, k := range keys(ts) {
			tf[k.stem]++
			if surfaces[k.stem] == nil {
				surfaces[k.stem] = map[string]int{}
			}
			surfaces[k.stem][k.surface]++
		}
	}
	type cand struct {
		stem  string
		score float64
	}
	var cs []cand
	for s, f := range tf {
		phrase := strings.Contains(s, " ")
		if phrase && f < 2 {
			continue
		}
		idf := math.Log(1 + float64(sentencesTotal)/float64(max(df[s], 1)))
		sc := f * idf
		if phrase {
			sc *= 1.5
		}
		cs = append(cs, cand{s, sc})
	}
	slices.SortFunc(cs, func(a, b cand) int { return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.stem, b.stem)) })
	var out []string
	var taken []string
	for _, c := range cs {
		if len(out) == maxKeywords {
			break
		}
		if slices.ContainsFunc(taken, func(t string) bool {
			return strings.Contains(" "+t+" ", " "+c.stem+" ") || strings.Contains(" "+c.stem+" ", " "+t+" ")
		}) {
			continue
		}
		taken = append(taken, c.stem)
		out = append(out, mostCommon(surfaces[c.stem]))
	}
	return out
}

func mostCommon(m map[string]int) string {
	best, n := "", -1
	for s, c := range m {
		if c > n || c == n && s < best {
			best, n = s, c
		}
	}
	return best
}

// list joins words as "a, b and c".
func list(ws []string) string {
	if len(ws) <= 1 {
		return strings.Join(ws, "")
	}
	return strings.Join(ws[:len(ws)-1], ", ") + " and " + ws[len(ws)-1]
}

func capitalise(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[size:]
}
