package sphinx

import "strings"

// letterToSound guesses an ARPAbet pronunciation (CMU dictionary phones,
// no stress) for a lower-case English word from its spelling. It is the
// fallback for vocabulary words the dictionary lacks and that come
// without a pronunciation, and it is deliberately small: a left-to-right
// longest match over common English spellings (digraphs such as "ch",
// "ph", "th", "ee", "ou", "tion"), "c" and "g" softened before e/i/y, a
// silent final "e" that lengthens the vowel before a single consonant
// ("made", "rote"), "-ed" and "-es" endings, and doubled consonants said
// once. Vowels otherwise take their short sound.
//
// Limits: English spelling is irregular and this knows no exceptions, no
// stress, no morphology beyond those endings and no foreign spellings, so
// it misses often on names ("Siobhan") and loans; "ough", "ea" and "ow"
// get one sound each. Digits and other non-letters are skipped (a word of
// only those gives nil). A pronunciation in the request, as phones or as
// a respelling, is always better.
func letterToSound(word string) []string {
	var w []byte
	for i := 0; i < len(word); i++ {
		if c := word[i]; c >= 'a' && c <= 'z' {
			w = append(w, c)
		} else if c >= 'A' && c <= 'Z' {
			w = append(w, c+'a'-'A')
		}
	}
	if len(w) == 0 {
		return nil
	}
	s := string(w)
	var out []string
	emit := func(ph ...string) {
		for _, p := range ph {
			if p == "" {
				continue
			}
			// A doubled consonant ("tt", "ck") is said once.
			if len(out) > 0 && out[len(out)-1] == p && !isVowelPhone(p) {
				continue
			}
			out = append(out, p)
		}
	}
	for i := 0; i < len(s); {
		rest := s[i:]
		if ph, n, ok := ending(s, i); ok {
			emit(ph...)
			i += n
			continue
		}
		if ph, n, ok := cluster(rest); ok {
			emit(ph...)
			i += n
			continue
		}
		c := s[i]
		next := byte(0)
		if i+1 < len(s) {
			next = s[i+1]
		}
		switch {
		case c == 'c' && isFront(next):
			emit("S")
		case c == 'g' && isFront(next) && i > 0:
			emit("JH")
		case c == 'y' && i == 0:
			emit("Y")
		case c == 'y' && i == len(s)-1:
			emit("IY")
		case isVowel(c) && magicE(s, i):
			emit(longVowel[c]...)
		case isVowel(c) || c == 'y':
			emit(shortVowel[c]...)
		default:
			emit(consonant[c]...)
		}
		i++
	}
	return out
}

// ending handles word-final spellings at i: "-e" (silent after a
// consonant, except in one-vowel words such as "be"), "-ed", "-es", "-le".
func ending(s string, i int) ([]string, int, bool) {
	rest := s[i:]
	prev := byte(0)
	if i > 0 {
		prev = s[i-1]
	}
	switch {
	case rest == "e" && i > 0 && !isVowel(prev) && hasVowel(s[:i]):
		return nil, 1, true
	case rest == "ed" && i > 1 && !isVowel(prev) && hasVowel(s[:i]):
		if prev == 't' || prev == 'd' {
			return []string{"IH", "D"}, 2, true
		}
		if strings.IndexByte("pkfsxc", prev) >= 0 || strings.HasSuffix(s[:i], "sh") || strings.HasSuffix(s[:i], "ch") {
			return []string{"T"}, 2, true
		}
		return []string{"D"}, 2, true
	case rest == "es" && i > 1 && (strings.IndexByte("sxz", prev) >= 0 || strings.HasSuffix(s[:i], "sh") || strings.HasSuffix(s[:i], "ch")):
		return []string{"IH", "Z"}, 2, true
	case rest == "es" && i > 1 && !isVowel(prev) && hasVowel(s[:i-1]):
		return []string{"Z"}, 2, true
	case rest == "le" && i > 1 && !isVowel(prev):
		return []string{"AH", "L"}, 2, true
	case rest == "s" && i > 1 && strings.IndexByte("ptkf", prev) < 0:
		return []string{"Z"}, 1, true
	}
	return nil, 0, false
}

// clusters are multi-letter spellings, longest first.
var clusters = []struct {
	spell  string
	phones []string
}{
	{"tion", []string{"SH", "AH", "N"}},
	{"sion", []string{"ZH", "AH", "N"}},
	{"ough", []string{"AO"}},
	{"igh", []string{"AY"}},
	{"tch", []string{"CH"}},
	{"dge", []string{"JH"}},
	{"sch", []string{"S", "K"}},
	{"ck", []string{"K"}},
	{"ch", []string{"CH"}},
	{"sh", []string{"SH"}},
	{"th", []string{"TH"}},
	{"ph", []string{"F"}},
	{"wh", []string{"W"}},
	{"kn", []string{"N"}},
	{"wr", []string{"R"}},
	{"gh", []string{"G"}},
	{"ng", []string{"NG"}},
	{"qu", []string{"K", "W"}},
	{"ee", []string{"IY"}},
	{"ea", []string{"IY"}},
	{"ie", []string{"IY"}},
	{"ei", []string{"EY"}},
	{"oo", []string{"UW"}},
	{"ou", []string{"AW"}},
	{"ow", []string{"OW"}},
	{"oa", []string{"OW"}},
	{"oi", []string{"OY"}},
	{"oy", []string{"OY"}},
	{"ai", []string{"EY"}},
	{"ay", []string{"EY"}},
	{"au", []string{"AO"}},
	{"aw", []string{"AO"}},
	{"ew", []string{"UW"}},
	{"ue", []string{"UW"}},
	{"ar", []string{"AA", "R"}},
	{"or", []string{"AO", "R"}},
	{"er", []string{"ER"}},
	{"ir", []string{"ER"}},
	{"ur", []string{"ER"}},
}

func cluster(rest string) ([]string, int, bool) {
	for _, c := range clusters {
		if strings.HasPrefix(rest, c.spell) {
			// "ng" before a vowel is two sounds ("engage" is not "eNGage").
			if c.spell == "ng" && len(rest) > 2 && isVowel(rest[2]) {
				continue
			}
			return c.phones, len(c.spell), true
		}
	}
	return nil, 0, false
}

// magicE reports a vowel at i followed by one consonant and a final "e"
// ("made", "time", "rote", "cute").
func magicE(s string, i int) bool {
	return i+3 == len(s) && !isVowel(s[i+1]) && s[i+1] != 'r' && s[i+2] == 'e'
}

var (
	shortVowel = map[byte][]string{'a': {"AE"}, 'e': {"EH"}, 'i': {"IH"}, 'o': {"AA"}, 'u': {"AH"}, 'y': {"IH"}}
	longVowel  = map[byte][]string{'a': {"EY"}, 'e': {"IY"}, 'i': {"AY"}, 'o': {"OW"}, 'u': {"UW"}}
	consonant  = map[byte][]string{
		'b': {"B"}, 'c': {"K"}, 'd': {"D"}, 'f': {"F"}, 'g': {"G"}, 'h': {"HH"}, 'j': {"JH"},
		'k': {"K"}, 'l': {"L"}, 'm': {"M"}, 'n': {"N"}, 'p': {"P"}, 'q': {"K"}, 'r': {"R"},
		's': {"S"}, 't': {"T"}, 'v': {"V"}, 'w': {"W"}, 'x': {"K", "S"}, 'z': {"Z"},
	}
)

func isVowel(c byte) bool { return strings.IndexByte("aeiou", c) >= 0 }
func isFront(c byte) bool { return c == 'e' || c == 'i' || c == 'y' }

func hasVowel(s string) bool { return strings.ContainsAny(s, "aeiouy") }

func isVowelPhone(p string) bool {
	return strings.IndexByte("AEIOU", p[0]) >= 0
}

// GuessPronunciation is the letter-to-sound fallback (see letterToSound)
// for tools that need a pronunciation of a word the dictionary lacks (the
// telephone model's adaptation transcripts); nil when word has no letters.
func GuessPronunciation(word string) []string { return letterToSound(word) }
