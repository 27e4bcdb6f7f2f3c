package ner

import (
	"fmt"
	"strconv"
)

// currencies maps spoken currency words to a symbol and whether the word
// names the minor unit.
var currencies = map[string]struct {
	sym   string
	minor bool
}{
	"dollar": {"$", false}, "dollars": {"$", false}, "buck": {"$", false}, "bucks": {"$", false},
	"pound": {"£", false}, "pounds": {"£", false}, "quid": {"£", false},
	"euro": {"€", false}, "euros": {"€", false}, "yen": {"¥", false},
	"rupee": {"₹", false}, "rupees": {"₹", false}, "franc": {"CHF ", false}, "francs": {"CHF ", false},
	"grand": {"$", false},
	"cent":  {"$", true}, "cents": {"$", true}, "pence": {"£", true}, "penny": {"£", true}, "p": {"£", true},
}

// moneyAt reads an amount of money at i: "twenty dollars", "a hundred
// and five pounds", "five pounds fifty", "twenty dollars and fifty cents",
// "ninety nine cents", "five grand".
func moneyAt(toks []string, i int) (int, string) {
	v, e := cardinal(toks, i)
	if e == i || e >= len(toks) {
		return i, ""
	}
	c, ok := currencies[toks[e]]
	if !ok || (toks[e] == "p" && v >= 100) {
		return i, ""
	}
	if c.minor {
		return e + 1, fmt.Sprintf("%s0.%02d", c.sym, v%100)
	}
	if toks[e] == "grand" {
		v *= 1000
	}
	e++
	minor := -1
	k := e
	if hasAt(toks, k, "and") {
		k++
	}
	if m, me := cardinal(toks, k); me > k && m < 100 {
		if me < len(toks) {
			if mc, ok := currencies[toks[me]]; ok && mc.minor {
				minor, e = int(m), me+1
			} else if k == e {
				// "five pounds fifty": no minor unit word.
				minor, e = int(m), me
			}
		} else if k == e {
			minor, e = int(m), me
		}
	}
	if minor >= 0 {
		return e, fmt.Sprintf("%s%d.%02d", c.sym, v, minor)
	}
	return e, c.sym + strconv.FormatInt(v, 10)
}

var ageUnits = [][]string{{"years", "old"}, {"year", "old"}, {"years", "of", "age"}, {"year", "olds"}, {"months", "old"}}

// detectMoneyAge finds amounts of money and ages ("forty two years old",
// "aged thirty", "age is fifty"). An age's entity is the number only.
func detectMoneyAge(toks []string) []cand {
	var cs []cand
	for i := 0; i < len(toks); i++ {
		if e, v := moneyAt(toks, i); e > i {
			cs = append(cs, cand{typ: Money, first: i, end: e, value: v})
			i = e - 1
			continue
		}
		v, e := cardinal(toks, i)
		if e == i || v > 130 {
			continue
		}
		age := false
		for _, u := range ageUnits {
			if hasAt(toks, e, u...) {
				age = true
			}
		}
		if i > 0 && (toks[i-1] == "aged" || toks[i-1] == "turned" || toks[i-1] == "turning" || toks[i-1] == "turns") {
			age = true
		}
		if hasAt(toks, i-1, "age") || hasAt(toks, i-2, "age", "is") || hasAt(toks, i-2, "age", "of") {
			age = true
		}
		if age {
			cs = append(cs, cand{typ: Age, first: i, end: e, value: strconv.FormatInt(v, 10)})
			i = e - 1
		}
	}
	return cs
}

var streetSuffixes = setOf(`street st avenue ave road rd lane drive boulevard
	blvd way court place terrace circle highway parkway square crescent close
	trail pike alley row`)

var unitWords2 = setOf(`apartment apt suite unit flat floor room`)

// detectAddresses finds street addresses: a house number, one to three
// words of street name and a street type ("one twenty three main
// street"), optionally an apartment or suite number; and "p o box" or
// "po box" with a number.
func detectAddresses(toks []string) []cand {
	var cs []cand
	for i := 0; i < len(toks); i++ {
		if hasAt(toks, i, "p", "o", "box") || hasAt(toks, i, "po", "box") {
			k := i + 2
			if toks[i] == "p" {
				k = i + 3
			}
			if d, e := digitString(toks, k); e > k {
				cs = append(cs, cand{typ: LocationAddress, first: i, end: e, value: "PO Box " + d})
				i = e - 1
			}
			continue
		}
		d, e := digitString(toks, i)
		if e == i || len(d) > 6 {
			continue
		}
		end := -1
		for k := e; k < len(toks) && k < e+4; k++ {
			if streetSuffixes[toks[k]] && k > e {
				end = k + 1
				break
			}
			if stopwords[toks[k]] && !isNumberWord(toks[k]) || toks[k] == "and" {
				break
			}
		}
		if end < 0 {
			continue
		}
		if end < len(toks) && unitWords2[toks[end]] {
			if _, ue := alnumRun(toks, end+1, true); ue > end+1 {
				end = ue
			}
		}
		cs = append(cs, cand{typ: LocationAddress, first: i, end: end})
		i = end - 1
	}
	return cs
}
