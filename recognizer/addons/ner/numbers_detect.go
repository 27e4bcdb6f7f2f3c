package ner

import (
	"strings"
)

// codeRule is a number announced by a cue: "my account number is ...",
// "the security code is ...". Digits are read with digitString; when
// letters is true, spelled letters ("a b one two three") are read too.
type codeRule struct {
	typ            string
	cues           []string
	minLen, maxLen int
	letters        bool
}

var codeRules = []codeRule{
	{CVV, []string{"cvv", "cvc", "cvv2", "c v v", "c v c", "c v v two", "security code", "security number", "verification code",
		"card code", "digits on the back", "numbers on the back", "code on the back", "three digit code", "four digit code",
		"back of the card"}, 3, 4, false},
	{RoutingNumber, []string{"routing", "routing number", "aba", "sort code", "transit number"}, 6, 9, false},
	{BankAccount, []string{"bank account", "checking account", "savings account", "iban", "bank account number"}, 6, 34, true},
	{AccountNumber, []string{"account number", "account", "account no", "customer number", "member number", "policy number", "customer id", "reference number", "order number", "invoice number"}, 4, 20, true},
	{PassportNumber, []string{"passport", "passport number", "passport no"}, 6, 12, true},
	{DriverLicense, []string{"driver's license", "drivers license", "driver license", "driving licence", "driving license", "license number", "licence number", "dl number"}, 5, 16, true},
	{HealthcareNumber, []string{"medical record", "medical record number", "mrn", "health card", "health card number", "health insurance number", "insurance number", "insurance id", "medicare", "medicare number", "medicaid", "medicaid number", "member id", "patient id", "patient number", "nhs number", "health number", "ramq"}, 5, 16, true},
	{LocationZip, []string{"zip", "zip code", "postal code", "postcode", "post code"}, 5, 9, true},
	{SSN, []string{"social security", "social security number", "social", "ssn", "s s n", "social insurance number", "sin", "sin number"}, 9, 9, false},
	// UK National Insurance number: two letters, six digits, a letter.
	{SSN, []string{"national insurance", "national insurance number", "n i number", "ni number"}, 9, 9, true},
	{CreditCard, []string{"card number", "credit card", "debit card", "card", "visa", "mastercard", "amex", "american express", "discover"}, 13, 19, false},
}

// codeFillers may sit between a cue and its number.
var codeFillers = setOf(`is it's number no was of my the your his her uh um
	code id colon ending in are that's`)

// phoneCues make a 9-digit run a phone number rather than an SSN.
var phoneCues = []string{"phone", "number", "call", "cell", "mobile", "telephone", "fax",
	"reach me", "reach me at", "text me", "extension", "dial"}

// alnumRun reads digits and spelled letters ("a b one two three").
func alnumRun(toks []string, i int, letters bool) (string, int) {
	var b strings.Builder
	j := i
	for j < len(toks) {
		if d, e := numberRun(toks, j); e > j {
			b.WriteString(d)
			j = e
			continue
		}
		w := toks[j]
		if letters && len(w) == 1 && w[0] >= 'a' && w[0] <= 'z' && (w != "a" || j+1 < len(toks) && (len(toks[j+1]) == 1 || isNumberWord(toks[j+1]))) {
			b.WriteString(strings.ToUpper(w))
			j++
			continue
		}
		break
	}
	return b.String(), j
}

// detectCodes finds numbers introduced by a cue (codeRules). The cue is
// not part of the entity.
func detectCodes(toks []string) []cand {
	var cs []cand
	for _, r := range codeRules {
		for _, cue := range r.cues {
			ph := strings.Fields(cue)
			for i := range toks {
				if !hasAt(toks, i, ph...) {
					continue
				}
				j := i + len(ph)
				for k := 0; k < 3 && j < len(toks) && codeFillers[toks[j]]; k++ {
					j++
				}
				v, e := alnumRun(toks, j, r.letters)
				if e == j || len(v) < r.minLen || len(v) > r.maxLen {
					continue
				}
				if r.letters && !strings.ContainsAny(v, "0123456789") {
					continue
				}
				if r.typ == CreditCard && !cardLength(v) {
					// A card said on into its expiry date and code.
					if m, cd := cardPrefix(toks, j, e); m > j {
						v, e = cd, m
					}
				}
				cs = append(cs, cand{typ: r.typ, first: j, end: e, value: v})
			}
		}
	}
	return cs
}

// detectNumbers classifies runs of spoken digits (numberRun) by length:
// payment card numbers (13..19 digits passing the Luhn check), social
// security numbers (9 digits of a valid SSN shape), phone numbers (7..11
// digits, up to 15 after "plus"). A homophone just before a run ("for one
// one one ...") joins it when the run becomes a card or a phone number only
// with it.
func detectNumbers(toks []string) []cand {
	var cs []cand
	for i := 0; i < len(toks); i++ {
		if !isNumberWord(toks[i]) && toks[i] != "plus" {
			continue
		}
		start := i
		plus := false
		if toks[i] == "plus" {
			plus = true
			i++
		}
		d, e := numberRun(toks, i)
		if e == i {
			i = start
			continue
		}
		maxPhone := maxNationalPhone
		if plus {
			maxPhone = maxInternationalPhone
		}
		typ := classify(d, maxPhone, toks, start)
		if typ != CreditCard && len(d) > 13 && !plus {
			// A card said on into its expiry date and code.
			if m, cd := cardPrefix(toks, i, e); m > i {
				cs = append(cs, cand{typ: CreditCard, first: i, end: m, value: cd})
				i = m - 1
				continue
			}
		}
		if h, ok := homophones[at(toks, start-1)]; ok && !plus && typ != CreditCard {
			if ht := classify(string(h)+d, maxNationalPhone, toks, start-1); ht == CreditCard || ht == PhoneNumber && typ == "" {
				typ, d, start, i = ht, string(h)+d, start-1, start-1
			}
		}
		switch typ {
		case CreditCard, SSN:
			cs = append(cs, cand{typ: typ, first: i, end: e, value: d})
		case PhoneNumber:
			if plus {
				d = "+" + d
			}
			cs = append(cs, cand{typ: PhoneNumber, first: start, end: e, value: d})
		}
		i = e - 1
	}
	return cs
}

// Phone numbers are 7 digits and more, up to maxNationalPhone, or up to
// maxInternationalPhone after "plus" (E.164).
const (
	maxNationalPhone      = 11
	maxInternationalPhone = 15
)

// cardLengths are the lengths to try, most common first, for a card
// number at the start of a longer run.
var cardLengths = []int{16, 15, 14, 19, 13, 17, 18}

// cardPrefix finds a card number at the start of the run of words
// toks[i:e] that goes on with 3 to 8 more digits (an expiry date and a
// code): the end of its words and its digits, or i when there is none.
func cardPrefix(toks []string, i, e int) (int, string) {
	ends := map[int]int{} // digits read -> end of the words read
	var digits string
	for m := i + 1; m <= e; m++ {
		if d, de := numberRun(toks[:m], i); de == m {
			ends[len(d)] = m
			if m == e {
				digits = d
			}
		}
	}
	for _, n := range cardLengths {
		m, ok := ends[n]
		if !ok || len(digits)-n < 3 || len(digits)-n > 8 {
			continue
		}
		if d := digits[:n]; cardNumber(d) {
			return m, d
		}
	}
	return i, ""
}

// cardNumber reports whether d is a payment card number: a length its
// issuer's prefix allows and the Luhn check.
func cardNumber(d string) bool { return cardLength(d) && luhn(d) }

// cardLength reports whether d has a length its issuer's prefix allows
// (American Express 15, Visa 13, 16 or 19, Mastercard 16, others 13 to
// 19). After a card cue a run of such a length is the card, misheard
// digits and all, not a shorter card followed by its code.
func cardLength(d string) bool {
	n := len(d)
	if n < 13 || n > 19 {
		return false
	}
	switch {
	case d[:2] == "34" || d[:2] == "37":
		return n == 15
	case d[0] == '4':
		return n == 13 || n == 16 || n == 19
	case d[:2] >= "51" && d[:2] <= "55":
		return n == 16
	}
	return true
}

// classify names what a run of digits d is by its length and checksum:
// CREDIT_CARD, SSN, PHONE_NUMBER (up to maxPhone digits) or "" (start is
// where the run's words start, for the phone cues before it).
func classify(d string, maxPhone int, toks []string, start int) string {
	n := len(d)
	switch {
	case cardNumber(d):
		return CreditCard
	case n == 9 && ssnShape(d) && !cueBefore(toks, start, 4, phoneCues...):
		return SSN
	case n >= 7 && n <= maxPhone:
		return PhoneNumber
	}
	return ""
}

// at returns toks[i], or "" outside toks.
func at(toks []string, i int) string {
	if i < 0 || i >= len(toks) {
		return ""
	}
	return toks[i]
}

// ssnShape reports whether d (9 digits) can be a US social security
// number: area not 000, 666 or 9xx; group not 00; serial not 0000.
func ssnShape(d string) bool {
	if len(d) != 9 {
		return false
	}
	return d[:3] != "000" && d[:3] != "666" && d[0] != '9' && d[3:5] != "00" && d[5:] != "0000"
}
