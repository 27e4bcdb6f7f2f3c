package sentences

import (
	"cmp"
	"slices"
	"sort"
	"strings"

	"github.com/earshot-dev/earshot/recognizer"
)

// Sentence is one sentence of one channel: its words joined with single
// spaces as they were given, and the start of its first word and the end
// of its last, in seconds.
type Sentence struct {
	Text       string
	Start, End float64
	Channel    int
}

// Position names one input word: utts[Utterance].Words[Word].
type Position struct{ Utterance, Word int }

// Segment is a Sentence with the positions of its words in the input, in
// order, and whether it reads as a question. A Segment made from an
// utterance that has text but no words has no positions. Forced marks a
// segment cut from an over-long run at its best pause rather than at a
// detected sentence end: it continues the previous segment of its channel
// (punctuation joins them again).
type Segment struct {
	Sentence
	Words    []Position
	Question bool
	Forced   bool
}

// Tuning of the boundary rule; the package comment explains each.
const (
	pauseFloor      = 0.03 // s: shorter gaps are coarticulation, not pauses
	defaultPause    = 0.25 // s: typical pause when a channel has too few
	minPauses       = 4
	minTypical      = 0.12
	maxTypical      = 0.6
	minBoundaryGap  = 0.45 // s
	minOpenerGap    = 0.3  // s: before a strong opener
	hardGap         = 1.5  // s: always a boundary
	overrideGap     = 3.0  // s: a boundary even after "the", "of" ...
	threshold       = 2.0
	shortThreshold  = 3.0
	shortSentence   = 3  // words
	longRun         = 20 // words
	veryLongRun     = 35 // words
	maxWords        = 40 // words: longer sentences are cut
	minPieceOnSplit = 5  // words
)

// Split returns the sentences of utts ordered by start time, then channel.
// See the package comment for the rule.
func Split(utts []recognizer.Utterance) []Sentence {
	segs := Segments(utts)
	out := make([]Sentence, len(segs))
	for i, s := range segs {
		out[i] = s.Sentence
	}
	return out
}

// word is one input word with its position and the gap before it.
type word struct {
	pos  Position
	w    recognizer.Word
	norm string  // lower case, surrounding punctuation removed
	gap  float64 // seconds since the previous word of the channel; 0 for the first
}

// Segments is Split with word positions and question marks; punctuation
// and subtitles use it to write back into the utterances.
func Segments(utts []recognizer.Utterance) []Segment {
	byChannel := map[int][]int{}
	var channels []int
	for i, u := range utts {
		if _, ok := byChannel[u.Channel]; !ok {
			channels = append(channels, u.Channel)
		}
		byChannel[u.Channel] = append(byChannel[u.Channel], i)
	}
	slices.Sort(channels)
	var out []Segment
	for _, ch := range channels {
		idx := byChannel[ch]
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(utts[a].Start, utts[b].Start) })
		var words []word
		for _, ui := range idx {
			u := utts[ui]
			if len(u.Words) == 0 {
				if t := strings.TrimSpace(u.Text); t != "" {
					out = append(out, Segment{
						Sentence: Sentence{Text: t, Start: u.Start, End: u.End, Channel: ch},
						Question: strings.HasSuffix(t, "?") || isQuestion(tokens(t)),
					})
				}
				continue
			}
			for wi, w := range u.Words {
				n := Normalize(w.Word)
				x := word{pos: Position{ui, wi}, w: w, norm: n}
				if len(words) > 0 {
					x.gap = max(0, w.Start-words[len(words)-1].w.End)
				}
				words = append(words, x)
			}
		}
		out = append(out, segmentChannel(words, ch)...)
	}
	slices.SortStableFunc(out, func(a, b Segment) int {
		return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.Channel, b.Channel))
	})
	return out
}

// TypicalPause returns the typical pause of a word sequence, in seconds:
// the median of its gaps of at least 30 ms, or 250 ms when there are fewer
// than four, clamped to 120..600 ms. gaps[i] is the silence before word i.
func TypicalPause(gaps []float64) float64 {
	var p []float64
	for _, g := range gaps {
		if g >= pauseFloor {
			p = append(p, g)
		}
	}
	if len(p) < minPauses {
		return defaultPause
	}
	sort.Float64s(p)
	m := p[len(p)/2]
	if len(p)%2 == 0 {
		m = (p[len(p)/2-1] + p[len(p)/2]) / 2
	}
	return min(max(m, minTypical), maxTypical)
}

func segmentChannel(words []word, ch int) []Segment {
	if len(words) == 0 {
		return nil
	}
	punctuated := slices.ContainsFunc(words, func(w word) bool { return endsSentence(w.w.Word) })
	gaps := make([]float64, len(words))
	for i, w := range words {
		gaps[i] = w.gap
	}
	m := TypicalPause(gaps)

	var cuts []int // word indexes that start a sentence, after 0
	start := 0
	for i := 1; i < len(words); i++ {
		var cut bool
		if punctuated {
			cut = endsSentence(words[i-1].w.Word) || words[i].gap >= hardGap
		} else {
			cut = score(words, i, i-start, m) >= 0
		}
		if cut {
			cuts = append(cuts, i)
			start = i
		}
	}
	// Cut over-long sentences at their best gap.
	bounds := append([]int{0}, cuts...)
	bounds = append(bounds, len(words))
	final := []int{}
	forced := map[int]bool{}
	for k := 0; k+1 < len(bounds); k++ {
		final = append(final, bounds[k])
		if !punctuated {
			for _, c := range splitLong(words, bounds[k], bounds[k+1], m) {
				final = append(final, c)
				forced[c] = true
			}
		}
	}
	final = append(final, len(words))
	slices.Sort(final)
	final = slices.Compact(final)

	var out []Segment
	for k := 0; k+1 < len(final); k++ {
		ws := words[final[k]:final[k+1]]
		texts := make([]string, len(ws))
		norms := make([]string, len(ws))
		pos := make([]Position, len(ws))
		for j, w := range ws {
			texts[j], norms[j], pos[j] = w.w.Word, w.norm, w.pos
		}
		last := ws[len(ws)-1].w.Word
		out = append(out, Segment{
			Sentence: Sentence{
				Text:    strings.Join(texts, " "),
				Start:   ws[0].w.Start,
				End:     ws[len(ws)-1].w.End,
				Channel: ch,
			},
			Words:    pos,
			Question: strings.HasSuffix(last, "?") || (!endsSentence(last) && isQuestion(norms)),
			Forced:   forced[final[k]],
		})
	}
	return out
}

// splitLong returns cut points inside words[from:to] so that no piece is
// longer than maxWords, choosing the best-scoring gaps.
func splitLong(words []word, from, to int, m float64) []int {
	if to-from <= maxWords {
		return nil
	}
	best, bestScore := -1, 0.0
	for i := from + minPieceOnSplit; i <= to-minPieceOnSplit; i++ {
		s := words[i].gap/m + cue(words, i)
		if nonFinal[words[i-1].norm] || nonInitial[words[i].norm] {
			s -= 10
		}
		if best < 0 || s > bestScore {
			best, bestScore = i, s
		}
	}
	if best < 0 {
		return nil
	}
	out := append(splitLong(words, from, best, m), best)
	return append(out, splitLong(words, best, to, m)...)
}

// score is >= 0 when a sentence boundary falls before words[i]; n is the
// number of words since the current sentence started.
func score(words []word, i, n int, m float64) float64 {
	g := words[i].gap
	prev, next := words[i-1].norm, words[i].norm
	if nonFinal[prev] || nonInitial[next] {
		return g - overrideGap
	}
	if g >= hardGap {
		return 0
	}
	c := cue(words, i)
	if g < minBoundaryGap && (c < 1 || g < minOpenerGap) {
		return -1
	}
	s := g/m + c
	if n >= veryLongRun {
		s += 1.5
	} else if n >= longRun {
		s += 0.5
	}
	if n < shortSentence {
		return s - shortThreshold
	}
	return s - threshold
}

// cue is the opener bonus of the word sequence starting at words[i].
func cue(words []word, i int) float64 {
	w := words[i].norm
	next := ""
	if i+1 < len(words) {
		next = words[i+1].norm
	}
	switch {
	case strongOpener[w]:
		return 1
	case questionWord[w] && (auxiliary[next] || subject[next] || quantity[next]):
		return 1
	case auxiliary[w] && subject[next]:
		return 1
	case w == "and" && (next == "so" || next == "then"):
		return 1
	case w == "i" || w == "let's" || strings.HasPrefix(w, "i'"):
		return 0.75
	case w == "and" || subject[w]:
		return 0.5
	case w == "the" || w == "this" || w == "that" || w == "these" || w == "those" || w == "there":
		return 0.25
	}
	return 0
}

// isQuestion reports whether a sentence with these normalised words reads
// as a question (see the package comment).
func isQuestion(ws []string) bool {
	if len(ws) < 2 {
		return false
	}
	a, b := ws[0], ws[1]
	if (a == "and" || a == "so" || a == "but" || a == "well" || a == "okay" || a == "ok") && len(ws) > 2 {
		a, b = ws[1], ws[2]
	}
	switch {
	case questionWord[a] && (auxiliary[b] || quantity[b] && a == "how"):
		return true
	case (a == "what" || a == "which" || a == "whose") && len(ws) > 3 && auxiliary[ws[2]] && subject[ws[3]]:
		return true // "what time is it", "which one do you want"
	case (a == "why" || a == "how") && subject[b]:
		return false // "why we ...", "how they ..." are usually clauses
	case auxiliary[a] && subject[b] && a != "let's":
		return true
	}
	return false
}

func endsSentence(w string) bool {
	w = strings.TrimRight(w, `"')]`)
	return strings.HasSuffix(w, ".") || strings.HasSuffix(w, "?") || strings.HasSuffix(w, "!")
}

// Normalize lower-cases a word and strips surrounding punctuation, keeping
// inner apostrophes and hyphens ("Don't," → "don't").
func Normalize(w string) string {
	return strings.ToLower(strings.TrimFunc(w, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r > 127)
	}))
}

func tokens(text string) []string {
	f := strings.Fields(text)
	for i := range f {
		f[i] = Normalize(f[i])
	}
	return f
}
