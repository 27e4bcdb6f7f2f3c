package recognizertest

import (
	"slices"
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

// Align aligns a and b by word edit distance (EditDistance's) and returns
// the aligned steps in order, each the index into a and into b, -1 for a
// gap (a word of the other only). A match is taken before a substitution,
// a substitution before a deletion, a deletion before an insertion.
func Align(a, b []string) [][2]int {
	n, m := len(a), len(b)
	d := make([][]int, n+1)
	for i := range d {
		d[i] = make([]int, m+1)
		d[i][0] = i
	}
	for j := range m + 1 {
		d[0][j] = j
	}
	for i := 1; i <= n; i++ {
		for j := 1; j <= m; j++ {
			sub := d[i-1][j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			d[i][j] = min(sub, d[i-1][j]+1, d[i][j-1]+1)
		}
	}
	var ops [][2]int
	for i, j := n, m; i > 0 || j > 0; {
		switch {
		case i > 0 && j > 0 && a[i-1] == b[j-1] && d[i][j] == d[i-1][j-1]:
			ops = append(ops, [2]int{i - 1, j - 1})
			i, j = i-1, j-1
		case i > 0 && j > 0 && d[i][j] == d[i-1][j-1]+1:
			ops = append(ops, [2]int{i - 1, j - 1})
			i, j = i-1, j-1
		case i > 0 && d[i][j] == d[i-1][j]+1:
			ops = append(ops, [2]int{i - 1, -1})
			i--
		default:
			ops = append(ops, [2]int{-1, j - 1})
			j--
		}
	}
	slices.Reverse(ops)
	return ops
}
