package ner

import (
	"strings"
	"unicode"

	"github.com/earshot-dev/earshot/recognizer"
)

// Words returns the words of u that entity word indexes (FirstWord,
// LastWord) refer to: u.Words when it has any, otherwise u.Text split on
// white space with times spread evenly over [u.Start, u.End]. Redaction
// (package pii) uses the same function, so indexes always line up.
func Words(u recognizer.Utterance) []recognizer.Word {
	if len(u.Words) > 0 {
		return u.Words
	}
	fields := strings.Fields(u.Text)
	if len(fields) == 0 {
		return nil
	}
	ws := make([]recognizer.Word, len(fields))
	step := (u.End - u.Start) / float64(len(fields))
	if step < 0 {
		step = 0
	}
	for i, f := range fields {
		ws[i] = recognizer.Word{
			Word:       f,
			Start:      u.Start + float64(i)*step,
			End:        u.Start + float64(i+1)*step,
			Confidence: u.Confidence,
		}
	}
	return ws
}

// normalize lower-cases a recognised word and strips punctuation around
// it, keeping apostrophes and dots inside it ("o'clock", "p.m").
func normalize(w string) string {
	w = strings.ToLower(w)
	w = strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	// Recognisers and punctuation add-ons write "p.m." and "a.m.".
	switch w {
	case "p.m", "p.m.":
		return "pm"
	case "a.m", "a.m.":
		return "am"
	}
	return w
}

func tokens(ws []recognizer.Word) []string {
	toks := make([]string, len(ws))
	for i, w := range ws {
		toks[i] = normalize(w.Word)
	}
	return toks
}

// hasAt reports whether toks[i:] starts with the words of phrase.
func hasAt(toks []string, i int, phrase ...string) bool {
	if i < 0 || i+len(phrase) > len(toks) {
		return false
	}
	for k, p := range phrase {
		if toks[i+k] != p {
			return false
		}
	}
	return true
}

// cueBefore reports whether one of cues (each a space-separated phrase)
// ends within window tokens before index i.
func cueBefore(toks []string, i, window int, cues ...string) bool {
	for _, c := range cues {
		ph := strings.Fields(c)
		for end := i; end >= i-window && end >= len(ph); end-- {
			if hasAt(toks, end-len(ph), ph...) {
				return true
			}
		}
	}
	return false
}
