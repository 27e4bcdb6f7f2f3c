package ner

import "strings"

// maxNameWords bounds a person's name ("mary ann smith jones").
const maxNameWords = 4

// detectNames finds people's names from the name lists. A name is one to
// four consecutive name words; a name word that is also an everyday word
// (ambiguous.txt) counts only next to another name word, after a title
// ("mister", "doctor") or after a cue ("my name is"). Each name gives a
// NAME candidate for the whole span and NAME_GIVEN / NAME_FAMILY
// candidates for its parts: the first word is given (unless it is only a
// family name or follows a title alone), later words are family names.
func detectNames(toks []string) []cand {
	g := gazetteers()
	isName := func(w string) bool { return (g.given[w] || g.family[w]) && len(w) > 1 }
	var cs []cand
	for i := 0; i < len(toks); i++ {
		if !isName(toks[i]) {
			continue
		}
		e := i
		for e < len(toks) && e-i < maxNameWords && isName(toks[e]) {
			e++
		}
		titled := i > 0 && titles[toks[i-1]]
		cued := titled || cueBefore(toks, i, 0, nameCues...)
		// Trim ambiguous words from the end ("john will") unless cued
		// or joined to an unambiguous name word.
		clear := 0
		for k := i; k < e; k++ {
			if !g.ambiguous[toks[k]] && !stopwords[toks[k]] {
				clear++
			}
		}
		if clear == 0 && !cued && e-i < 2 {
			i = e - 1
			continue
		}
		if clear == 0 && !cued {
			// Two or more everyday words that are all names ("rose
			// hill") are not taken without a cue.
			i = e - 1
			continue
		}
		for e-1 > i && g.ambiguous[toks[e-1]] && !g.family[toks[e-1]] {
			e--
		}
		cs = append(cs, cand{typ: Name, first: i, end: e, value: strings.Join(toks[i:e], " ")})
		for k := i; k < e; k++ {
			typ := NameFamily
			switch {
			case k == i && e-i == 1 && titled:
				typ = NameFamily
			case k == i && g.given[toks[k]]:
				typ = NameGiven
			case k > i && k < e-1 && g.given[toks[k]]:
				typ = NameGiven // middle name
			case !g.family[toks[k]]:
				typ = NameGiven
			}
			cs = append(cs, cand{typ: typ, first: k, end: k + 1, value: toks[k]})
		}
		i = e - 1
	}
	return cs
}

// detectPlaces finds places from the location list, longest match first.
// Places marked with "?" need a cue before them ("in", "from").
func detectPlaces(toks []string) []cand {
	g := gazetteers()
	var cs []cand
	for i := 0; i < len(toks); i++ {
		for n := min(g.maxPlace, len(toks)-i); n >= 1; n-- {
			name := strings.Join(toks[i:i+n], " ")
			cue, ok := g.places[name]
			if !ok {
				continue
			}
			if cue && !cueBefore(toks, i, 0, placeCues...) {
				continue
			}
			cs = append(cs, cand{typ: Location, first: i, end: i + n, value: name})
			i += n - 1
			break
		}
	}
	return cs
}

// detectOrgs finds organisations: up to three content words before a
// suffix ("acme corporation", "first national bank"), a prefix with "of"
// and one or two content words ("bank of america", "university of
// texas"), or a well-known name ("google").
func detectOrgs(toks []string) []cand {
	g := gazetteers()
	var cs []cand
	content := func(w string) bool {
		return w != "" && !stopwords[w] && !orgSuffixes[w] && !isNumberWord(w) && !dotWords[w]
	}
	for i, w := range toks {
		if knownOrgs[w] {
			cs = append(cs, cand{typ: Organization, first: i, end: i + 1, value: w})
		}
		if orgSuffixes[w] {
			s := i
			for s > 0 && i-s < 3 && content(toks[s-1]) {
				s--
			}
			// Extend to the suffix words that follow ("acme systems inc").
			e := i + 1
			for e < len(toks) && orgSuffixes[toks[e]] && e-i < 2 {
				e++
			}
			if s < i {
				cs = append(cs, cand{typ: Organization, first: s, end: e, value: strings.Join(toks[s:e], " ")})
			}
		}
		if orgPrefixes[w] && hasAt(toks, i+1, "of") {
			e := i + 2
			// A place name after "of", else one or two content words.
			best := e
			for n := min(g.maxPlace, len(toks)-e); n >= 1; n-- {
				if _, ok := g.places[strings.Join(toks[e:e+n], " ")]; ok {
					best = e + n
					break
				}
			}
			if best == e {
				for best < len(toks) && best-e < 2 && content(toks[best]) {
					best++
				}
			}
			if best > e {
				cs = append(cs, cand{typ: Organization, first: i, end: best, value: strings.Join(toks[i:best], " ")})
			}
		}
	}
	return cs
}

// detectMedical finds medical conditions and drugs from small lists.
func detectMedical(toks []string) []cand {
	var cs []cand
	for i := range toks {
		for _, p := range conditionPhrases {
			ph := strings.Fields(p)
			if hasAt(toks, i, ph...) {
				cs = append(cs, cand{typ: Condition, first: i, end: i + len(ph), value: p})
			}
		}
		if conditions[toks[i]] {
			cs = append(cs, cand{typ: Condition, first: i, end: i + 1, value: toks[i]})
		}
		if drugs[toks[i]] {
			cs = append(cs, cand{typ: Drug, first: i, end: i + 1, value: toks[i]})
		}
	}
	return cs
}
