package recognizertest

import (
	"strings"
	"unicode"
)

// WER returns the word error rate of hypothesis against reference: the
// Levenshtein distance over words (substitutions, insertions, deletions)
// divided by the number of reference words. Both texts are normalised
// first (Normalize). With an empty reference the result is the number of
// hypothesis words (every one an insertion), so 0 when both are empty.
func WER(reference, hypothesis string) float64 {
	ref := Normalize(reference)
	hyp := Normalize(hypothesis)
	if len(ref) == 0 {
		return float64(len(hyp))
	}
	return float64(EditDistance(ref, hyp)) / float64(len(ref))
}

// Normalize lowercases text, drops punctuation except apostrophes inside
// words ("i'm" stays, "'quoted'" loses its quotes) and splits it into words.
func Normalize(text string) []string {
	var b strings.Builder
	rs := []rune(strings.ToLower(text))
	for i, r := range rs {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		case r == '\'' || r == '’':
			if i > 0 && i < len(rs)-1 && isWordRune(rs[i-1]) && isWordRune(rs[i+1]) {
				b.WriteRune('\'')
			} else {
				b.WriteRune(' ')
			}
		default:
			b.WriteRune(' ')
		}
	}
	return strings.Fields(b.String())
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// EditDistance is the word-level Levenshtein distance between a and b.
func EditDistance(a, b []string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
