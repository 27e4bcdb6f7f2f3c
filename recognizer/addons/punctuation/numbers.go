package punctuation

import (
	"strconv"
	"strings"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/addons/sentences"
)

var units = map[string]int{"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
	"six": 6, "seven": 7, "eight": 8, "nine": 9}

var teens = map[string]int{"ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
	"fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19}

var tens = map[string]int{"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
	"seventy": 70, "eighty": 80, "ninety": 90}

var scales = map[string]int{"hundred": 100, "thousand": 1000, "million": 1000000, "billion": 1000000000}

// yearCue words announce a year: "in nineteen eighty four".
var yearCue = map[string]bool{"in": true, "of": true, "since": true, "about": true, "from": true,
	"until": true, "till": true, "year": true, "around": true, "circa": true, "by": true,
	"early": true, "late": true, "mid": true, "before": true, "after": true}

func isNumberWord(w string) bool {
	_, u := units[w]
	_, t := teens[w]
	_, d := tens[w]
	_, s := scales[w]
	return u || t || d || s
}

// parseCardinal reads the longest cardinal number at the start of ws and
// returns its value, the number of words used and whether a scale word
// appeared. It stops where a following word could not continue the same
// number ("five six" is two numbers).
func parseCardinal(ws []string) (value, n int, scaled bool) {
	total, current := 0, 0
	last := "" // class of the previous number word: u(nit) t(een) d(tens) h(undred) s(cale)
	for n < len(ws) {
		w := ws[n]
		if w == "and" && last == "h" && n+1 < len(ws) && isNumberWord(ws[n+1]) && scales[ws[n+1]] == 0 {
			n++
			continue
		}
		if v, ok := units[w]; ok {
			if last == "u" || last == "t" || (last == "d" && v == 0) {
				break
			}
			current += v
			last = "u"
		} else if v, ok := teens[w]; ok {
			if last == "u" || last == "t" || last == "d" {
				break
			}
			current += v
			last = "t"
		} else if v, ok := tens[w]; ok {
			if last == "u" || last == "t" || last == "d" {
				break
			}
			current += v
			last = "d"
		} else if v, ok := scales[w]; ok {
			if n == 0 || last == "h" || (v == 100 && (current == 0 || current > 99)) {
				break
			}
			if v == 100 {
				current *= 100
				last = "h"
			} else {
				if current == 0 || total != 0 && total < v*1000 {
					break
				}
				total += current * v
				current = 0
				last = "s"
			}
			scaled = true
		} else {
			break
		}
		n++
	}
	// An "and" that did not lead to a number is not part of it.
	for n > 0 && ws[n-1] == "and" {
		n--
	}
	return total + current, n, scaled
}

// parseNumber reads a number at the start of ws: a year, a decimal or a
// cardinal, with "percent". prev is the word before ws. It returns the
// written form and the words used, or n == 0 when ws starts no number
// worth writing in digits.
func parseNumber(prev string, ws []string) (text string, n int) {
	v, n, scaled := parseCardinal(ws)
	if n == 0 {
		return "", 0
	}
	// Years: "fourteen fifty five", "nineteen oh five", "twenty twenty four".
	if n <= 2 && v >= 11 && v <= 20 && !scaled && n < len(ws) && (yearCue[prev] || v >= 18) {
		rest := ws[n:]
		if rest[0] == "hundred" {
			return strconv.Itoa(v * 100), n + 1
		}
		if rest[0] == "oh" && len(rest) > 1 {
			if u, ok := units[rest[1]]; ok && u > 0 {
				return strconv.Itoa(v*100 + u), n + 2
			}
		}
		if y, m, s := parseCardinal(rest); m > 0 && !s && y >= 10 && y <= 99 {
			return strconv.Itoa(v*100 + y), n + m
		}
	}
	text = strconv.Itoa(v)
	if n+1 < len(ws) && ws[n] == "point" {
		var digits strings.Builder
		k := n + 1
		for k < len(ws) {
			d, ok := units[ws[k]]
			if !ok {
				break
			}
			digits.WriteString(strconv.Itoa(d))
			k++
		}
		if digits.Len() > 0 {
			text += "." + digits.String()
			n = k
			scaled = true
		}
	}
	if n < len(ws) && ws[n] == "percent" {
		return text + "%", n + 1
	}
	if v < 10 && !scaled {
		return "", 0
	}
	return text, n
}

// formatNumbers rewrites runs of number words in words as digits, merging
// them into one Word. Words that carry punctuation inside a run end it;
// the last word's trailing punctuation moves to the merged word.
func formatNumbers(words []recognizer.Word) []recognizer.Word {
	out := make([]recognizer.Word, 0, len(words))
	for i := 0; i < len(words); {
		// The run of plain words a number could use.
		var ws []string
		for k := i; k < len(words) && len(ws) < 12; k++ {
			ws = append(ws, sentences.Normalize(words[k].Word))
			if hasTrailingPunct(words[k].Word) {
				break
			}
		}
		prev := ""
		if i > 0 {
			prev = sentences.Normalize(words[i-1].Word)
		}
		text, n := "", 0
		if isNumberWord(ws[0]) {
			text, n = parseNumber(prev, ws)
		}
		if n == 0 {
			out = append(out, words[i])
			i++
			continue
		}
		run := words[i : i+n]
		var conf float64
		for _, w := range run {
			conf += w.Confidence
		}
		last := run[n-1].Word
		out = append(out, recognizer.Word{
			Word:       text + last[len(strings.TrimRightFunc(last, isPunct)):],
			Start:      run[0].Start,
			End:        run[n-1].End,
			Confidence: conf / float64(n),
		})
		i += n
	}
	return out
}

func hasTrailingPunct(w string) bool {
	return w != "" && isPunct(rune(w[len(w)-1]))
}

func isPunct(r rune) bool { return strings.ContainsRune(`.,?!;:"')`, r) }
