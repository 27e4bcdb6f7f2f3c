package ner

import (
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/recognizer"
)

// FuzzReaders feeds arbitrary word strings to the spoken-number and
// address readers and to Find: no panics, spans stay inside the input,
// digit strings hold only digits.
func FuzzReaders(f *testing.F) {
	for _, s := range []string{
		"five five five one two three four", "a hundred and five", "john dot smith at example dot com",
		"twenty twenty four", "double triple oh", "at dot com", "h t t p s colon slash slash www dot a dot com",
		"one nine two dot one six eight dot one dot ten", "nine hundred thousand million billion and",
		"the third of march nineteen ninety at half past nine", "99999999999999999999 thousand",
		"for one one one dash one one one one uh one one one one to one one one one", "expires oh four slash twenty six",
		"bob seventy two at g mail dot com", "c v v one two three", "four one one one|one one one one|one one one one one one one one",
		"card three seven eight two eight two two four six three one double oh oh five oh four twenty six one two three four",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		toks := make([]string, 0, 16)
		for _, w := range strings.Fields(s) {
			toks = append(toks, normalize(w))
		}
		for i := range toks {
			d, e := digitString(toks, i)
			if e < i || e > len(toks) || strings.Trim(d, "0123456789") != "" {
				t.Fatalf("digitString(%q, %d) = %q, %d", toks, i, d, e)
			}
			if d, e := numberRun(toks, i); e < i || e > len(toks) || e-i > maxRunWords+maxRunWords || strings.Trim(d, "0123456789") != "" {
				t.Fatalf("numberRun(%q, %d) = %q, %d", toks, i, d, e)
			}
			if v, e := expiryDigits(toks, i); e < i || e > len(toks) || e > i && len(v) != 5 {
				t.Fatalf("expiryDigits(%q, %d) = %q, %d", toks, i, v, e)
			}
			if _, e := cardinal(toks, i); e < i || e > len(toks) {
				t.Fatalf("cardinal end %d", e)
			}
			if _, e := year(toks, i); e < i || e > len(toks) {
				t.Fatalf("year end %d", e)
			}
			if first, e, addr := email(toks, i); e > first && (first < 0 || e > len(toks) || !strings.Contains(addr, "@")) {
				t.Fatalf("email(%q, %d) = %d, %d, %q", toks, i, first, e, addr)
			}
		}
		// "|" cuts the text into utterances (numbers are joined across).
		var us []recognizer.Utterance
		for k, part := range strings.Split(s, "|") {
			us = append(us, recognizer.Utterance{Text: part, Start: float64(k), End: float64(k) + 0.9})
		}
		ents, _ := Find(us, nil)
		for _, e := range ents {
			if e.Utterance < 0 || e.Utterance >= len(us) {
				t.Fatalf("entity %+v outside %d utterances", e, len(us))
			}
			n := len(Words(us[e.Utterance]))
			if e.FirstWord < 0 || e.LastWord >= n || e.FirstWord > e.LastWord {
				t.Fatalf("entity %+v outside %d words", e, n)
			}
		}
	})
}
