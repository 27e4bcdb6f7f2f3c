package ner

import (
	"strconv"
	"strings"
)

// Spoken numbers. Recognisers write numbers as words ("five five five one
// two three four", "twenty dollars", "nineteen ninety"), so every numeric
// detector starts from these readers. Each takes the normalised tokens of an
// utterance and a start index and returns how far it read (end, exclusive);
// end == i means nothing was read. None of them allocates per token beyond
// its result, and all stop at the end of the slice.

var unitWords = map[string]int{
	"zero": 0, "oh": 0, "o": 0, "one": 1, "two": 2, "three": 3, "four": 4,
	"five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
}

var teenWords = map[string]int{
	"ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
	"fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
}

var tensWords = map[string]int{
	"twenty": 20, "thirty": 30, "forty": 40, "fourty": 40, "fifty": 50,
	"sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
}

var scaleWords = map[string]int64{
	"thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000,
}

var ordinalUnits = map[string]int{
	"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6,
	"seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11,
	"twelfth": 12, "thirteenth": 13, "fourteenth": 14, "fifteenth": 15,
	"sixteenth": 16, "seventeenth": 17, "eighteenth": 18, "nineteenth": 19,
	"twentieth": 20, "thirtieth": 30,
}

// maxDigitToken bounds a token written with digits ("1990") that the
// readers accept, so values cannot overflow.
const maxDigitToken = 18

func isDigitToken(w string) bool {
	if w == "" || len(w) > maxDigitToken {
		return false
	}
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return false
		}
	}
	return true
}

// isNumberWord reports whether w can be part of a spoken number.
func isNumberWord(w string) bool {
	if _, ok := unitWords[w]; ok {
		return true
	}
	if _, ok := teenWords[w]; ok {
		return true
	}
	if _, ok := tensWords[w]; ok {
		return true
	}
	if _, ok := scaleWords[w]; ok {
		return true
	}
	return w == "hundred" || w == "double" || w == "triple" || isDigitToken(w)
}

// cardinal reads a cardinal number ("one hundred and twenty five", "a
// hundred", "twenty five thousand three hundred", "fifteen hundred") and
// returns its value. "oh" and "o" are not cardinals; "zero" is only read
// alone. A digit token is read as its value.
func cardinal(toks []string, i int) (val int64, end int) {
	const (
		none = iota
		unit
		teen
		tens
		hundred
		scale
	)
	if i >= len(toks) {
		return 0, i
	}
	if isDigitToken(toks[i]) {
		v, err := strconv.ParseInt(toks[i], 10, 64)
		if err != nil {
			return 0, i
		}
		return v, i + 1
	}
	if toks[i] == "zero" {
		return 0, i + 1
	}
	var total, cur int64
	last := none
	lastScale := int64(1 << 62)
	j := i
	for j < len(toks) {
		w := toks[j]
		if u, ok := unitWords[w]; ok && w != "oh" && w != "o" && w != "zero" {
			if last == unit || last == teen {
				break
			}
			cur += int64(u)
			last = unit
			j++
			continue
		}
		if t, ok := teenWords[w]; ok {
			if last == unit || last == teen || last == tens {
				break
			}
			cur += int64(t)
			last = teen
			j++
			continue
		}
		if t, ok := tensWords[w]; ok {
			if last == unit || last == teen || last == tens {
				break
			}
			cur += int64(t)
			last = tens
			j++
			continue
		}
		if w == "a" && j == i && j+1 < len(toks) && (toks[j+1] == "hundred" || scaleWords[toks[j+1]] > 0) {
			cur = 1
			last = unit
			j++
			continue
		}
		if w == "hundred" {
			if last != unit && last != teen && !(last == tens && cur%100 != 0) {
				break
			}
			if cur%100 == 0 || cur >= 100 {
				break
			}
			cur *= 100
			last = hundred
			j++
			continue
		}
		if s, ok := scaleWords[w]; ok {
			if last == none || last == scale || s >= lastScale || cur == 0 {
				break
			}
			total += cur * s
			cur = 0
			lastScale = s
			last = scale
			j++
			continue
		}
		if w == "and" && (last == hundred || last == scale) && j+1 < len(toks) {
			n := toks[j+1]
			if _, ok := unitWords[n]; ok && n != "oh" && n != "o" && n != "zero" {
				j++
				continue
			}
			if _, ok := teenWords[n]; ok {
				j++
				continue
			}
			if _, ok := tensWords[n]; ok {
				j++
				continue
			}
		}
		break
	}
	if last == none {
		return 0, i
	}
	return total + cur, j
}

// digitString reads numbers spoken as a string of digits, as people read
// phone and card numbers: digits ("five five five"), "oh" for zero,
// "double"/"triple" repeats, pairs ("twelve thirty four" = 1234), "eight
// hundred" = 800 and "two thousand" = 2000. It stops at the first token
// that is not part of a number. A run made only of "oh"/"o" is not read.
func digitString(toks []string, i int) (digits string, end int) {
	var b strings.Builder
	j := i
	real := false
	for j < len(toks) {
		w := toks[j]
		if isDigitToken(w) {
			b.WriteString(w)
			real = true
			j++
			continue
		}
		if (w == "double" || w == "triple") && j+1 < len(toks) {
			if u, ok := unitWords[toks[j+1]]; ok {
				n := 2
				if w == "triple" {
					n = 3
				}
				b.WriteString(strings.Repeat(strconv.Itoa(u), n))
				real = true
				j += 2
				continue
			}
			break
		}
		next := ""
		if j+1 < len(toks) {
			next = toks[j+1]
		}
		// "eight hundred", "twenty five thousand three hundred": a
		// cardinal with a multiplier is read whole.
		if v, e := cardinal(toks, j); e > j+1 && hasMultiplier(toks[j:e]) {
			b.WriteString(strconv.FormatInt(v, 10))
			real = true
			j = e
			continue
		}
		if u, ok := unitWords[w]; ok {
			b.WriteByte(byte('0' + u))
			if w != "oh" && w != "o" {
				real = true
			}
			j++
			continue
		}
		if t, ok := teenWords[w]; ok {
			b.WriteString(strconv.Itoa(t))
			real = true
			j++
			continue
		}
		if t, ok := tensWords[w]; ok {
			if u, ok := unitWords[next]; ok && u != 0 {
				b.WriteString(strconv.Itoa(t + u))
				j += 2
			} else {
				b.WriteString(strconv.Itoa(t))
				j++
			}
			real = true
			continue
		}
		break
	}
	if !real {
		return "", i
	}
	return b.String(), j
}

func hasMultiplier(toks []string) bool {
	for _, w := range toks {
		if w == "hundred" || scaleWords[w] > 0 {
			return true
		}
	}
	return false
}

// ordinal reads an ordinal ("third", "twenty first", "thirtieth") and
// returns its value.
func ordinal(toks []string, i int) (val int, end int) {
	if i >= len(toks) {
		return 0, i
	}
	if t, ok := tensWords[toks[i]]; ok && i+1 < len(toks) {
		if u, ok := ordinalUnits[toks[i+1]]; ok && u < 10 {
			return t + u, i + 2
		}
	}
	if u, ok := ordinalUnits[toks[i]]; ok {
		return u, i + 1
	}
	w := toks[i]
	for _, suf := range []string{"st", "nd", "rd", "th"} {
		if n, ok := strings.CutSuffix(w, suf); ok && isDigitToken(n) && len(n) <= 2 {
			v, _ := strconv.Atoi(n)
			return v, i + 1
		}
	}
	return 0, i
}

// year reads a year as people say it: "nineteen ninety nine", "nineteen
// oh five", "twenty twenty four", "two thousand and five", "1990". Only
// 1000..2099 are years.
func year(toks []string, i int) (val int, end int) {
	if i >= len(toks) {
		return 0, i
	}
	if isDigitToken(toks[i]) && len(toks[i]) == 4 {
		v, _ := strconv.Atoi(toks[i])
		if v >= 1000 && v <= 2099 {
			return v, i + 1
		}
		return 0, i
	}
	// Century pair: "nineteen" / "twenty" / "eighteen" then two digits.
	hi := 0
	if t, ok := teenWords[toks[i]]; ok && t >= 10 {
		hi = t
	} else if toks[i] == "twenty" {
		hi = 20
	}
	if hi != 0 && i+1 < len(toks) {
		if lo, e := twoDigits(toks, i+1); e > i+1 {
			return hi*100 + lo, e
		}
		if toks[i+1] == "hundred" {
			return hi * 100, i + 2
		}
	}
	if v, e := cardinal(toks, i); e > i && v >= 1000 && v <= 2099 {
		return int(v), e
	}
	return 0, i
}

// twoDigits reads the second half of a spoken year: "ninety nine",
// "fifteen", "oh five", "ten".
func twoDigits(toks []string, i int) (val int, end int) {
	if i >= len(toks) {
		return 0, i
	}
	w := toks[i]
	if (w == "oh" || w == "o") && i+1 < len(toks) {
		if u, ok := unitWords[toks[i+1]]; ok && u > 0 {
			return u, i + 2
		}
		return 0, i
	}
	if t, ok := teenWords[w]; ok {
		return t, i + 1
	}
	if t, ok := tensWords[w]; ok {
		if i+1 < len(toks) {
			if u, ok := unitWords[toks[i+1]]; ok && u > 0 && toks[i+1] != "o" {
				return t + u, i + 2
			}
		}
		return t, i + 1
	}
	return 0, i
}

// luhn reports whether a digit string passes the Luhn check used by
// payment card numbers.
func luhn(d string) bool {
	if len(d) < 2 {
		return false
	}
	sum := 0
	double := false
	for i := len(d) - 1; i >= 0; i-- {
		c := d[i]
		if c < '0' || c > '9' {
			return false
		}
		n := int(c - '0')
		if double {
			n *= 2
			if n > 9 {
				n -= 9
			}
		}
		sum += n
		double = !double
	}
	return sum%10 == 0
}
