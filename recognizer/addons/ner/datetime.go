package ner

import (
	"fmt"
	"strings"
)

var months = map[string]int{
	"january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6,
	"july": 7, "august": 8, "september": 9, "october": 10, "november": 11,
	"december": 12, "jan": 1, "feb": 2, "sept": 9, "oct": 10, "nov": 11, "dec": 12,
}

// vagueMonths are also everyday words; alone they are not dates.
var vagueMonths = setOf(`may march august jan`)

var weekdays = setOf(`monday tuesday wednesday thursday friday saturday sunday`)

var (
	dobCues    = []string{"born", "born on", "birthday", "date of birth", "birth date", "dob", "d o b", "birthdate"}
	expiryCues = []string{"expires", "expiration", "expiration date", "expiry", "expiry date", "exp", "valid through", "valid until", "valid thru", "good through", "good thru", "expires on"}
)

// day reads a day of the month: an ordinal or a cardinal 1..31.
func day(toks []string, i int) (int, int) {
	if v, e := ordinal(toks, i); e > i && v >= 1 && v <= 31 {
		return v, e
	}
	if v, e := cardinal(toks, i); e > i && v >= 1 && v <= 31 {
		return int(v), e
	}
	return 0, i
}

// dateAt reads a date starting at i and returns its end and written form
// (YYYY-MM-DD, YYYY-MM, --MM-DD or the weekday).
func dateAt(toks []string, i int) (int, string) {
	best, val := i, ""
	try := func(e int, v string) {
		if e > best {
			best, val = e, v
		}
	}
	skipThe := func(j int) int {
		if hasAt(toks, j, "the") {
			return j + 1
		}
		return j
	}
	write := func(y, m, d int) string {
		switch {
		case y > 0 && d > 0:
			return fmt.Sprintf("%04d-%02d-%02d", y, m, d)
		case y > 0:
			return fmt.Sprintf("%04d-%02d", y, m)
		default:
			return fmt.Sprintf("--%02d-%02d", m, d)
		}
	}
	yearAfter := func(j int) (int, int) {
		k := j
		if hasAt(toks, k, "of") || hasAt(toks, k, "in") {
			k++
		}
		if y, e := year(toks, k); e > k {
			return y, e
		}
		return 0, j
	}
	if i >= len(toks) {
		return i, ""
	}
	w := toks[i]
	if weekdays[w] {
		try(i+1, w)
		j := i + 1
		if e, v := dateAt(toks, skipThe(j)); e > skipThe(j) && !weekdays[toks[skipThe(j)]] {
			try(e, v)
		}
		return best, val
	}
	// month [the] day [year] | month year | month alone
	if m, ok := months[w]; ok {
		j := skipThe(i + 1)
		if d, e := day(toks, j); e > j {
			y, e2 := yearAfter(e)
			try(e2, write(y, m, d))
		}
		if y, e := year(toks, i+1); e > i+1 {
			try(e, write(y, m, 0)[:7])
		}
		if !vagueMonths[w] {
			try(i+1, fmt.Sprintf("--%02d", m))
		}
		return best, val
	}
	// ordinal [of] month [year]
	j := i
	if d, e := ordinal(toks, j); e > j && d <= 31 {
		k := e
		if hasAt(toks, k, "of") {
			k++
		}
		if k < len(toks) {
			if m, ok := months[toks[k]]; ok {
				y, e2 := yearAfter(k + 1)
				try(e2, write(y, m, d))
			}
		}
	}
	return best, val
}

// detectDates finds dates, and marks a date as DOB after a birth cue and
// as CREDIT_CARD_EXPIRATION after an expiry cue. A bare year counts after
// "in", "since", "year" or "of".
func detectDates(toks []string) []cand {
	var cs []cand
	for i := 0; i < len(toks); i++ {
		e, v := dateAt(toks, i)
		if e == i && i > 0 && (toks[i-1] == "in" || toks[i-1] == "since" || toks[i-1] == "year" ||
			toks[i-1] == "until" || toks[i-1] == "of" || toks[i-1] == "before" || toks[i-1] == "after") {
			if y, ye := year(toks, i); ye > i && !strings.Contains(toks[ye-1], "thousand") {
				// "in nineteen ninety", not "in two thousand" alone.
				if ye < len(toks) && (toks[ye] == "dollars" || toks[ye] == "people" || toks[ye] == "pounds") {
					continue
				}
				e, v = ye, fmt.Sprintf("%04d", y)
			}
		}
		if e == i {
			// Card expiry as digits: "expires oh four twenty six".
			if cueBefore(toks, i, 3, expiryCues...) {
				if v, de := expiryDigits(toks, i); de > i {
					cs = append(cs, cand{typ: CreditCardExpiration, first: i, end: de, value: v})
					i = de - 1
				}
			}
			continue
		}
		cs = append(cs, cand{typ: Date, first: i, end: e, value: v})
		if cueBefore(toks, i, 4, dobCues...) {
			cs = append(cs, cand{typ: DOB, first: i, end: e, value: v})
		}
		if cueBefore(toks, i, 3, expiryCues...) {
			cs = append(cs, cand{typ: CreditCardExpiration, first: i, end: e, value: v})
		}
		i = e - 1
	}
	return cs
}

var dayParts = [][]string{{"in", "the", "morning"}, {"in", "the", "afternoon"}, {"in", "the", "evening"}, {"at", "night"}, {"tonight"}}

// timeAt reads a clock time at i: "ten thirty a m", "seven o'clock",
// "half past nine", "quarter to five", "noon". It returns the end and
// the time as H:MM (24 h when am/pm was said, otherwise as spoken).
func timeAt(toks []string, i int) (int, string) {
	if i >= len(toks) {
		return i, ""
	}
	switch toks[i] {
	case "noon", "midday":
		return i + 1, "12:00"
	case "midnight":
		return i + 1, "00:00"
	case "half", "quarter":
		if i+2 < len(toks) && (toks[i+1] == "past" || toks[i+1] == "to" || toks[i+1] == "after" || toks[i+1] == "before") {
			if h, e := cardinal(toks, i+2); e > i+2 && h >= 1 && h <= 12 {
				m := 30
				if toks[i] == "quarter" {
					m = 15
				}
				if toks[i+1] == "to" || toks[i+1] == "before" {
					h, m = (h+10)%12+1, 60-m
				}
				return e, fmt.Sprintf("%d:%02d", h, m)
			}
		}
		return i, ""
	}
	h, e := cardinal(toks, i)
	if e == i || h < 1 || h > 12 {
		return i, ""
	}
	// "<m> minutes past <h>"
	if hasAt(toks, e, "minutes") {
		e++
	}
	if e < len(toks) && (toks[e] == "past" || toks[e] == "to" || toks[e] == "after") && h <= 30 {
		if hh, e2 := cardinal(toks, e+1); e2 > e+1 && hh >= 1 && hh <= 12 {
			m := int(h)
			if toks[e] == "to" {
				hh, m = (hh+10)%12+1, 60-m
			}
			return e2, fmt.Sprintf("%d:%02d", hh, m)
		}
		return i, ""
	}
	_, e = cardinal(toks, i)
	mins := 0
	hasMin := false
	if mm, e2 := twoDigits(toks, e); e2 > e && mm < 60 {
		mins, e, hasMin = mm, e2, true
	}
	switch {
	case hasAt(toks, e, "a", "m") || hasAt(toks, e, "am"):
		n := 1
		if toks[e] == "a" {
			n = 2
		}
		return e + n, fmt.Sprintf("%02d:%02d", int(h)%12, mins)
	case hasAt(toks, e, "p", "m") || hasAt(toks, e, "pm"):
		n := 1
		if toks[e] == "p" {
			n = 2
		}
		return e + n, fmt.Sprintf("%02d:%02d", int(h)%12+12, mins)
	case !hasMin && (hasAt(toks, e, "o'clock") || hasAt(toks, e, "oclock")):
		return e + 1, fmt.Sprintf("%d:00", h)
	case !hasMin && hasAt(toks, e, "o", "clock"):
		return e + 2, fmt.Sprintf("%d:00", h)
	}
	for _, p := range dayParts {
		if hasAt(toks, e, p...) {
			return e + len(p), fmt.Sprintf("%d:%02d", h, mins)
		}
	}
	if hasMin && i > 0 && (toks[i-1] == "at" || toks[i-1] == "by" || toks[i-1] == "until" || toks[i-1] == "around") {
		return e, fmt.Sprintf("%d:%02d", h, mins)
	}
	return i, ""
}

func detectTimes(toks []string) []cand {
	var cs []cand
	for i := 0; i < len(toks); i++ {
		if e, v := timeAt(toks, i); e > i {
			cs = append(cs, cand{typ: Time, first: i, end: e, value: v})
			i = e - 1
		}
	}
	return cs
}

// expiryDigits reads a card's expiry date said as digits at i, month then
// year: "oh four twenty six" (MMYY), "four twenty six" (MYY), "oh four
// slash twenty six", "oh four twenty twenty six" (MMYYYY). It returns the
// date as MM/YY and its end; end == i when there is none.
func expiryDigits(toks []string, i int) (string, int) {
	d, e := digitString(toks, i)
	if e == i {
		return "", i
	}
	if hasAt(toks, e, "slash") || hasAt(toks, e, "dash") {
		if y, ye := digitString(toks, e+1); ye > e+1 && (len(y) == 2 || len(y) == 4) {
			d, e = d+y, ye
		}
	}
	switch {
	case len(d) == 3 && d[0] != '0':
		d = "0" + d
	case len(d) == 6 && d[2:4] == "20":
		d = d[:2] + d[4:]
	case len(d) != 4:
		return "", i
	}
	if d[:2] < "01" || d[:2] > "12" {
		return "", i
	}
	return d[:2] + "/" + d[2:], e
}
