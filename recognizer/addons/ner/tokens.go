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
	return writtenNumber(w)
}

// writtenNumber returns the digits of a number a recogniser wrote in
// groups, as engines that format their output do: "415-555-2671",
// "123-45-6789", "4111-1111-1111-1111", "(415)" (its parentheses already
// trimmed by normalize: "415"), and a card's expiry "04/26" or "4/26".
// Anything else, an ISO date "2024-03-05" included, is returned unchanged.
func writtenNumber(w string) string {
	if len(w) > 2*maxDigitToken || !strings.ContainsAny(w, "-/") {
		return w
	}
	groups := strings.FieldsFunc(w, func(r rune) bool { return r == '-' || r == '/' })
	if len(groups) < 2 {
		return w
	}
	for _, g := range groups {
		if !isDigitToken(g) {
			return w
		}
	}
	if strings.Contains(w, "/") {
		// Only MM/YY: "12/25/2024" is a date, "3/4" a fraction.
		if len(groups) != 2 || len(groups[1]) != 2 || len(groups[0]) > 2 {
			return w
		}
	} else if len(groups[0]) == 4 && (len(groups) == 3 && len(groups[1]) == 2 && len(groups[2]) == 2 ||
		len(groups) == 2 && len(groups[1]) == 4 && (w[:2] == "19" || w[:2] == "20")) {
		return w // a date, 2024-03-05, or years, 2020-2021
	}
	d := strings.Join(groups, "")
	if len(d) > maxDigitToken {
		return w
	}
	return d
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
