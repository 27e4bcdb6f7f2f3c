package ner

// Spoken digit runs as people read card, phone and social security numbers
// aloud and as recognisers write them: in groups ("four one one one ...
// one one one one"), with what separates the groups said or heard ("dash",
// "hyphen", "uh", "um"), and with a digit now and then written as the word
// it sounds like ("for one one one", "two oh six to five five five").
// numberRun reads such a run into its digits and the words it covers, so
// that a redaction of the run covers every one of its words, separators and
// homophones included.

// runSeparators may sit between two groups of a digit run; they are part
// of the run only with digits on both sides.
var runSeparators = setOf(`dash hyphen uh um er erm ah`)

// homophones are words a recogniser writes for a digit it heard. Inside a
// run (digits on both sides) they are read as that digit; at the start of
// a run only detectNumbers decides, by what the run becomes (numberRunFrom).
var homophones = map[string]byte{
	"for": '4', "fore": '4', "to": '2', "too": '2', "won": '1', "ate": '8',
}

// maxRunWords bounds the words one run reads: the longest number read
// aloud (a 19-digit card or a 15-digit international phone number, each
// digit a word, with a separator between groups) fits many times over, and
// a transcript of nothing but digits cannot make the readers above it
// quadratic: each run is read once, from its first word.
const maxRunWords = 64

// numberRun reads a run of spoken digits starting at i (digitString's
// forms: digits, "oh", "double five", "forty one eleven", "eight hundred")
// joined across separators and homophones that sit between two groups. It
// returns the digits and the end of the run (exclusive); end == i when no
// digit starts at i.
func numberRun(toks []string, i int) (digits string, end int) {
	d, e := digitString(toks, i)
	if e == i {
		return "", i
	}
	buf := []byte(d)
	for e < len(toks) && e-i < maxRunWords && len(buf) < 2*maxDigitToken {
		w := toks[e]
		if runSeparators[w] {
			if nd, ne := digitString(toks, e+1); ne > e+1 {
				buf = append(buf, nd...)
				e = ne
				continue
			}
			break
		}
		if h, ok := homophones[w]; ok && e+1 < len(toks) && startsDigits(toks[e+1]) {
			buf = append(buf, h)
			if nd, ne := digitString(toks, e+1); ne > e+1 {
				buf = append(buf, nd...)
				e = ne
				continue
			}
			e++
			continue
		}
		break
	}
	return string(buf), e
}

// startsDigits reports whether w is a digit word or a digit token: the
// word after a homophone must be one for the homophone to be read.
func startsDigits(w string) bool {
	if _, ok := unitWords[w]; ok {
		return w != "o"
	}
	if _, ok := teenWords[w]; ok {
		return true
	}
	if _, ok := tensWords[w]; ok {
		return true
	}
	return w == "double" || w == "triple" || isDigitToken(w)
}
