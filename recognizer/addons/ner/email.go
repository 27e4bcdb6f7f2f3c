package ner

import (
	"strconv"
	"strings"
)

// Spoken addresses: "john dot smith at example dot com", "www dot example
// dot org slash help", "one nine two dot one six eight dot one dot ten".

var tlds = setOf(`com org net edu gov mil int io co uk us ca de fr es it nl be
	ch at au nz in jp cn ru br mx info biz me tv ai app dev xyz eu ie se no dk fi
	pl pt gr cz za sg hk kr tw ar cl online site tech`)

// dotWords say "." in an address; sepWords are other characters spoken
// inside a mailbox name.
var (
	dotWords = setOf(`dot period`)
	sepWords = map[string]string{"underscore": "_", "dash": "-", "hyphen": "-", "minus": "-"}
)

// isLabel reports whether w can be a piece of a mailbox or domain name.
func isLabel(w string) bool {
	if w == "" || w == "at" || dotWords[w] || sepWords[w] != "" {
		return false
	}
	for _, r := range w {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '\'') {
			return false
		}
	}
	return true
}

// labelText is how a spoken label is written: digit words become digits.
func labelText(w string) string {
	if u, ok := unitWords[w]; ok && w != "o" {
		return strconv.Itoa(u)
	}
	return strings.ReplaceAll(w, "'", "")
}

// maxLabelWords bounds the words of a number said in a mailbox name.
const maxLabelWords = 3

// maxDomainWords bounds the words an e-mail domain's first label is heard
// as ("g mail", "hot mail").
const maxDomainWords = 2

// domain reads a domain name starting at i: label (dot label)+ ending in a
// known top-level domain. It returns the written domain and its end.
func domain(toks []string, i int) (string, int) { return domainOf(toks, i, 1) }

// mailDomain is domain for an e-mail address, whose first label may be
// heard as up to maxDomainWords words ("g mail dot com").
func mailDomain(toks []string, i int) (string, int) { return domainOf(toks, i, maxDomainWords) }

// domainOf reads a domain whose first label is at most firstWords words.
func domainOf(toks []string, i, firstWords int) (string, int) {
	if i >= len(toks) || !isLabel(toks[i]) {
		return "", i
	}
	// A first label heard as words: "g mail", "hot mail", "out look"
	// (each word after the first a label, not an everyday word).
	first := labelText(toks[i])
	j := i + 1
	for k := 1; k < firstWords && j+1 < len(toks) && isLabel(toks[j]) && !stopwords[toks[j]] && dotWords[toks[j+1]]; k++ {
		first += labelText(toks[j])
		j++
	}
	parts := []string{first}
	best, bestEnd := "", i
	for j+1 < len(toks) && dotWords[toks[j]] && isLabel(toks[j+1]) {
		parts = append(parts, labelText(toks[j+1]))
		j += 2
		if tlds[toks[j-1]] {
			best, bestEnd = strings.Join(parts, "."), j
		}
	}
	return best, bestEnd
}

// email reads a spoken e-mail address around the "at" at index at. It
// returns the span [first, end) and the written address.
func email(toks []string, at int) (first, end int, addr string) {
	if at < 1 || at >= len(toks) || toks[at] != "at" {
		return at, at, ""
	}
	dom, e := mailDomain(toks, at+1)
	if e == at+1 {
		return at, at, ""
	}
	j := at - 1
	if !isLabel(toks[j]) || stopwords[toks[j]] && len(toks[j]) > 1 && !startsDigits(toks[j]) {
		return at, at, ""
	}
	local := []string{labelText(toks[j])}
	switch {
	case cardinalBefore(toks, at) < at:
		// "bob seventy two at ...": a number said as a cardinal.
		k := cardinalBefore(toks, at)
		d, e := digitString(toks, k)
		if e != at {
			return at, at, ""
		}
		local, j = []string{d}, k
		if j > 0 && isLabel(toks[j-1]) && !stopwords[toks[j-1]] {
			j--
			local = append([]string{labelText(toks[j])}, local...)
		}
	case len(toks[j]) == 1 || isDigitWord(toks[j]):
		// Spelled out: "j o h n at ..." or "john one two at".
		for j > 0 && (len(toks[j-1]) == 1 && toks[j-1] != "a" && toks[j-1] != "i" || isDigitWord(toks[j-1])) {
			j--
			local = append([]string{labelText(toks[j])}, local...)
		}
		if j > 0 && isLabel(toks[j-1]) && !stopwords[toks[j-1]] {
			j--
			local = append([]string{labelText(toks[j])}, local...)
		}
	default:
		for j >= 2 && (dotWords[toks[j-1]] || sepWords[toks[j-1]] != "") && isLabel(toks[j-2]) {
			sep := "."
			if s := sepWords[toks[j-1]]; s != "" {
				sep = s
			}
			local = append([]string{labelText(toks[j-2]), sep}, local...)
			j -= 2
		}
		// "john smith at ..." for johnsmith@: take a name said before;
		// "j smith at ...": an initial.
		g := gazetteers()
		if j >= 1 && (g.given[toks[j-1]] || g.family[toks[j-1]]) && !stopwords[toks[j-1]] &&
			(g.given[toks[j]] || g.family[toks[j]]) {
			j--
			local = append([]string{labelText(toks[j])}, local...)
		} else if j >= 1 && len(toks[j-1]) == 1 && toks[j-1] >= "b" && toks[j-1] <= "z" && toks[j-1] != "i" {
			j--
			local = append([]string{toks[j]}, local...)
		}
	}
	return j, e, strings.Join(local, "") + "@" + dom
}

// cardinalBefore returns where the number words just before at start
// when one of them is a teen, a tens word or a multiplier ("seventy two",
// "nineteen"), at itself when there is no such number.
func cardinalBefore(toks []string, at int) int {
	k := at
	for k > 0 && at-k < maxLabelWords && isNumberWord(toks[k-1]) && toks[k-1] != "o" {
		k--
	}
	for _, w := range toks[k:at] {
		if !isDigitWord(w) && w != "oh" {
			return k
		}
	}
	return at
}

func isDigitWord(w string) bool {
	_, ok := unitWords[w]
	return ok && w != "o" && w != "oh"
}

// writtenEmail reports whether w is an e-mail address as an engine that
// formats its output writes it: "john.smith@example.com".
func writtenEmail(w string) bool {
	local, dom, ok := strings.Cut(w, "@")
	if !ok || local == "" || strings.Contains(dom, "@") {
		return false
	}
	labels := strings.Split(dom, ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if l == "" || !isLabel(l) {
			return false
		}
	}
	return true
}

// detectEmailURL finds e-mail addresses and web addresses.
func detectEmailURL(toks []string) []cand {
	var cs []cand
	for i, w := range toks {
		if writtenEmail(w) {
			cs = append(cs, cand{typ: EmailAddress, first: i, end: i + 1, value: w})
		}
	}
	for i := range toks {
		if toks[i] == "at" {
			if f, e, a := email(toks, i); e > f {
				cs = append(cs, cand{typ: EmailAddress, first: f, end: e, value: a})
			}
		}
	}
	for i := 0; i < len(toks); i++ {
		if covered(cs, i) {
			continue
		}
		start := i
		prefix := ""
		// "h t t p s colon slash slash", "http colon slash slash".
		if j, p := scheme(toks, i); j > i {
			prefix, i = p, j
		}
		if i > 0 && toks[i-1] == "at" && prefix == "" {
			continue
		}
		dom, e := domain(toks, i)
		if e == i {
			i = start
			continue
		}
		// Path: "slash word" repeated.
		for e+1 < len(toks) && toks[e] == "slash" && isLabel(toks[e+1]) {
			dom += "/" + labelText(toks[e+1])
			e += 2
		}
		cs = append(cs, cand{typ: URL, first: start, end: e, value: prefix + dom})
		i = e - 1
	}
	return cs
}

func covered(cs []cand, i int) bool {
	for _, c := range cs {
		if i >= c.first && i < c.end {
			return true
		}
	}
	return false
}

// scheme reads a spoken "http(s)://" and returns its end and text.
func scheme(toks []string, i int) (int, string) {
	j := i
	s := ""
	switch {
	case hasAt(toks, j, "https"):
		s, j = "https", j+1
	case hasAt(toks, j, "http"):
		s, j = "http", j+1
	case hasAt(toks, j, "h", "t", "t", "p", "s"):
		s, j = "https", j+5
	case hasAt(toks, j, "h", "t", "t", "p"):
		s, j = "http", j+4
	default:
		return i, ""
	}
	if hasAt(toks, j, "colon", "slash", "slash") {
		j += 3
	} else if hasAt(toks, j, "colon") {
		j++
	}
	return j, s + "://"
}

// octet reads one part of an IPv4 address (0..255), as a cardinal
// ("one ninety two") or as digits ("one nine two").
func octet(toks []string, i int) (int, int) {
	if d, e := digitString(toks, i); e > i && len(d) <= 3 {
		// Prefer the digit reading when it is at most three digits and
		// the cardinal reading would stop earlier.
		v, _ := strconv.Atoi(d)
		if v <= 255 {
			return v, e
		}
	}
	if v, e := cardinal(toks, i); e > i && v <= 255 {
		return int(v), e
	}
	return 0, i
}

// detectIP finds dotted IPv4 addresses.
func detectIP(toks []string) []cand {
	var cs []cand
	for i := 0; i < len(toks); i++ {
		parts := make([]string, 0, 4)
		j := i
		for k := 0; k < 4; k++ {
			if k > 0 {
				if j >= len(toks) || !(dotWords[toks[j]] || toks[j] == "point") {
					break
				}
				j++
			}
			v, e := octet(toks, j)
			if e == j {
				break
			}
			parts = append(parts, strconv.Itoa(v))
			j = e
		}
		if len(parts) == 4 {
			cs = append(cs, cand{typ: IPAddress, first: i, end: j, value: strings.Join(parts, ".")})
			i = j - 1
		}
	}
	return cs
}
