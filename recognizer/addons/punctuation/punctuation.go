package punctuation

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/addons/sentences"
)

// Comma rule tuning; the package comment explains it.
const (
	minCommaGap = 0.2 // s
	commaFactor = 0.6 // x the speaker's typical pause
	introPause  = 0.1 // s after "now"/"so" that makes it introductory
)

// Restore returns deep copies of utts with punctuation, capitals and
// numbers restored in each Word and in Text (the words joined with single
// spaces); Confidence stays the mean of the words'. Order and times are
// kept; number words merged into digits become one Word spanning them.
func Restore(utts []recognizer.Utterance) []recognizer.Utterance {
	out := make([]recognizer.Utterance, len(utts))
	for i, u := range utts {
		out[i] = u
		out[i].Words = append([]recognizer.Word(nil), u.Words...)
	}
	segs := sentences.Segments(utts)

	// The speaker's typical pause, per channel, from the gaps between the
	// channel's words in sentence order.
	gapsByChannel := map[int][]float64{}
	lastEnd := map[int]float64{}
	for _, s := range segs {
		for k, p := range s.Words {
			w := utts[p.Utterance].Words[p.Word]
			g := 0.0
			if e, ok := lastEnd[s.Channel]; ok || k > 0 {
				g = max(0, w.Start-e)
			}
			gapsByChannel[s.Channel] = append(gapsByChannel[s.Channel], g)
			lastEnd[s.Channel] = w.End
		}
	}
	typical := map[int]float64{}
	for ch, g := range gapsByChannel {
		typical[ch] = sentences.TypicalPause(g)
	}

	// A forced cut (an over-long sentence split at a pause) is not a
	// sentence end: join such pieces back to the piece before them.
	var groups []sentences.Segment
	lastGroup := map[int]int{}
	for _, s := range segs {
		if g, ok := lastGroup[s.Channel]; ok && s.Forced {
			groups[g].Words = append(groups[g].Words, s.Words...)
			continue
		}
		s.Words = slices.Clone(s.Words)
		lastGroup[s.Channel] = len(groups)
		groups = append(groups, s)
	}

	for _, s := range groups {
		if len(s.Words) == 0 || alreadyFormatted(utts, s) {
			continue
		}
		m := typical[s.Channel]
		toks := make([]string, len(s.Words))
		norms := make([]string, len(s.Words))
		gaps := make([]float64, len(s.Words))
		for k, p := range s.Words {
			w := utts[p.Utterance].Words[p.Word]
			toks[k] = w.Word
			norms[k] = sentences.Normalize(w.Word)
			if k > 0 {
				prev := s.Words[k-1]
				gaps[k] = max(0, w.Start-utts[prev.Utterance].Words[prev.Word].End)
			}
		}
		punctuate(toks, norms, gaps, m, s.Question)
		for k, p := range s.Words {
			out[p.Utterance].Words[p.Word].Word = toks[k]
		}
	}
	for i := range out {
		if len(out[i].Words) == 0 {
			continue
		}
		out[i].Words = formatNumbers(out[i].Words)
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

// alreadyFormatted reports whether a sentence's words carry punctuation or
// capitals, which Restore then keeps as they are.
func alreadyFormatted(utts []recognizer.Utterance, s sentences.Segment) bool {
	for _, p := range s.Words {
		w := utts[p.Utterance].Words[p.Word].Word
		if strings.ContainsAny(w, ".,?!;:") || strings.ToLower(w) != w {
			return true
		}
	}
	return false
}

// punctuate adds commas, the end mark and capitals to one sentence's
// tokens in place. norms are the lower-case words, gaps[k] the silence
// before token k, m the speaker's typical pause.
func punctuate(toks, norms []string, gaps []float64, m float64, question bool) {
	n := len(toks)
	commaGap := max(minCommaGap, commaFactor*m)
	for k := 1; k < n; k++ {
		prev, cur := norms[k-1], norms[k]
		comma := false
		switch {
		case !sentences.CanEnd(prev) || !sentences.CanStart(cur) || isNumberWord(prev) && isNumberWord(cur):
		case k == 1 && (intro[prev] || (prev == "now" || prev == "so") && gaps[k] >= introPause):
			comma = true
		case cur == "but" || cur == "however":
			comma = true
		case gaps[k] >= commaGap:
			comma = true
		}
		if comma {
			toks[k-1] += ","
		}
	}
	if question {
		toks[n-1] += "?"
	} else {
		toks[n-1] += "."
	}
	for k := range toks {
		toks[k] = capitalise(toks[k], norms[k], k == 0)
	}
}

// intro words take a comma when they open a sentence.
var intro = map[string]bool{"well": true, "yes": true, "yeah": true, "okay": true, "ok": true,
	"however": true, "oh": true, "anyway": true, "alright": true}

// capitalise returns tok with its first letter upper-cased when it starts
// a sentence or is always written with a capital.
func capitalise(tok, norm string, first bool) string {
	switch {
	case norm == "i" || strings.HasPrefix(norm, "i'"):
	case first, proper[norm]:
	default:
		return tok
	}
	r, size := utf8.DecodeRuneInString(tok)
	return string(unicode.ToUpper(r)) + tok[size:]
}

// proper words are always capitalised in English.
var proper = map[string]bool{
	"monday": true, "tuesday": true, "wednesday": true, "thursday": true, "friday": true,
	"saturday": true, "sunday": true, "january": true, "february": true, "april": true,
	"june": true, "july": true, "september": true, "october": true, "november": true,
	"december": true, "english": true, "french": true, "german": true, "spanish": true,
	"italian": true, "chinese": true, "japanese": true, "russian": true, "american": true,
	"british": true, "european": true, "african": true, "asian": true, "canadian": true,
	"dutch": true, "portuguese": true, "arabic": true, "indian": true, "mexican": true,
	"irish": true, "scottish": true, "greek": true, "latin": true, "christmas": true,
	"easter": true, "god": true, "internet": true,
}
