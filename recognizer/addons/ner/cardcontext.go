package ner

import "slices"

// After a card number people go on with its expiry date and security code,
// often without naming them: "four one one one ... oh four twenty six one
// two three". afterCard reads what follows a card (or an expiry date) in
// the same utterance: an expiry date said as digits (MMYY, MYY, MM slash
// YY, with a plausible year) and then a code of three or four digits. A
// recogniser writes the two as one run of digits, which afterCard splits
// where the expiry ends.

// contextFillers may sit between a card, its expiry and its code.
var contextFillers = setOf(`and uh um er the its it's is then code security`)

// maxContextFillers bounds the fillers skipped between them.
const maxContextFillers = 3

// Card expiry years said as two digits: 20xx within these.
const minExpiryYear, maxExpiryYear = "20", "49"

func skipContextFillers(toks []string, i int) int {
	for k := 0; k < maxContextFillers && i < len(toks) && contextFillers[toks[i]]; k++ {
		i++
	}
	return i
}

// isCode reports whether d can be a card's security code.
func isCode(d string) bool { return len(d) == 3 || len(d) == 4 }

// plausibleExpiry reports whether v (MM/YY) has a year a card can have.
func plausibleExpiry(v string) bool {
	return len(v) == 5 && v[3:] >= minExpiryYear && v[3:] <= maxExpiryYear
}

// afterCard returns the expiry and code candidates that follow the card
// and expiry candidates in cs.
func afterCard(toks []string, cs []cand) []cand {
	var out []cand
	for _, c := range cs {
		if c.typ != CreditCard && c.typ != CreditCardExpiration {
			continue
		}
		j := skipContextFillers(toks, c.end)
		d, e := numberRun(toks, j)
		if e == j {
			continue
		}
		if c.typ == CreditCard {
			if exp, code := splitExpiry(toks, j, e); exp.end > j {
				out = append(out, exp)
				if code.end > code.first {
					out = append(out, code)
				} else if k := skipContextFillers(toks, exp.end); k < len(toks) {
					if cd, ce := numberRun(toks, k); ce > k && isCode(cd) {
						out = append(out, cand{typ: CVV, first: k, end: ce, value: cd})
					}
				}
				continue
			}
		}
		if isCode(d) {
			out = append(out, cand{typ: CVV, first: j, end: e, value: d})
		}
	}
	return out
}

// splitExpiry finds an expiry date at j, where a run of digits ends at e:
// the date read whole ("oh one slash twenty nine"), or the shortest prefix
// of the run's words that is one, with the rest of the run a code (never
// splitting "twenty six"). A three-digit run alone is taken as a code, not
// as a date (MYY), since nothing follows to tell.
func splitExpiry(toks []string, j, e int) (exp, code cand) {
	if v, ve := expiryDigits(toks, j); ve > j && plausibleExpiry(v) {
		if d, _ := digitString(toks[:ve], j); len(d) == 3 && ve == e && skipContextFillers(toks, ve) >= len(toks) {
			return cand{}, cand{}
		}
		return cand{typ: CreditCardExpiration, first: j, end: ve, value: v}, cand{}
	}
	for m := j + 1; m < e; m++ {
		if _, tens := tensWords[toks[m-1]]; tens && startsDigits(toks[m]) && unitWords[toks[m]] > 0 {
			continue
		}
		v, ve := expiryDigits(toks[:m], j)
		if ve != m || !plausibleExpiry(v) {
			continue
		}
		if d, de := numberRun(toks[:e], m); de == e && isCode(d) {
			return cand{typ: CreditCardExpiration, first: j, end: m, value: v}, cand{typ: CVV, first: m, end: e, value: d}
		}
	}
	return cand{}, cand{}
}

// withCardContext adds afterCard's candidates to cs and drops the phone
// numbers and social security numbers they were read as.
func withCardContext(toks []string, cs []cand) []cand {
	ctx := afterCard(toks, cs)
	if len(ctx) == 0 {
		return cs
	}
	cs = slices.DeleteFunc(cs, func(c cand) bool {
		return (c.typ == PhoneNumber || c.typ == SSN) && slices.ContainsFunc(ctx, func(x cand) bool { return x.first < c.end && c.first < x.end })
	})
	return append(cs, ctx...)
}
