// Command piibench measures PII detection (package ner, as pii_redaction
// runs it) on a labelled set of sentences written the way a recogniser
// writes them: lower case, no punctuation, numbers as words.
//
//	go run ./bench/cmd/piibench [-set bench/pii/eval.txt] [-misses]
//
// The set marks entities inline, "[CREDIT_CARD four one one one ...]"
// (markup.go). Every sentence becomes one utterance (one second a word)
// given to ner.Find with the types the set marks (plus NAME and LOCATION,
// which the redaction presets ask for beside them), so a detection of a
// type nobody marked in a sentence counts against precision.
//
// Per entity type it prints: exact precision and recall (a found entity
// counts when an entity of the same type with the same first and last word
// was marked), and the redaction recall (a marked entity counts when every
// one of its words is inside some found entity of any type, that is, when
// MARKER redaction would leave none of its words). Run from the repository
// root. -misses lists every marked entity missed and every false detection,
// for reading; rules are tuned on their own examples
// (recognizer/addons/ner/testdata/tuning.txt), never on this set.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/addons/ner"
)

func main() {
	set := flag.String("set", "bench/pii/eval.txt", "labelled set file")
	misses := flag.Bool("misses", false, "list missed and false entities")
	flag.Parse()
	if err := run(os.Stdout, *set, *misses); err != nil {
		fmt.Fprintln(os.Stderr, "piibench:", err)
		os.Exit(1)
	}
}

// counts are one entity type's tallies.
type counts struct {
	gold, found, exact, covered int
}

func run(w io.Writer, path string, misses bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	set, err := parseSet(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	types := []string{ner.Name, ner.Location}
	for _, s := range set {
		for _, sp := range s.spans {
			if !slices.Contains(types, sp.typ) {
				types = append(types, sp.typ)
			}
		}
	}
	if _, unknown := ner.Expand(types); len(unknown) > 0 {
		return fmt.Errorf("%s marks types ner does not know: %v", path, unknown)
	}
	byType := map[string]*counts{}
	for _, t := range types {
		byType[t] = &counts{}
	}
	words := 0
	for _, s := range set {
		words += len(s.words)
		ents, _ := ner.Find([]recognizer.Utterance{utterance(s.words)}, types)
		found := make([]span, len(ents))
		for i, e := range ents {
			found[i] = span{e.Type, e.FirstWord, e.LastWord}
		}
		for _, g := range s.spans {
			c := byType[g.typ]
			c.gold++
			if slices.Contains(found, g) {
				c.exact++
			} else if misses {
				fmt.Fprintf(w, "miss  %d %s %q in %q; found %s\n", s.line, g.typ, strings.Join(s.words[g.first:g.last+1], " "), strings.Join(s.words, " "), show(s.words, found))
			}
			if covered(g, found) {
				c.covered++
			}
		}
		for _, fe := range found {
			byType[fe.typ].found++
			if misses && !slices.Contains(s.spans, fe) {
				fmt.Fprintf(w, "false %d %s %q in %q\n", s.line, fe.typ, strings.Join(s.words[fe.first:fe.last+1], " "), strings.Join(s.words, " "))
			}
		}
	}
	fmt.Fprintf(w, "set %s: %d sentences, %d words\n\n", path, len(set), words)
	fmt.Fprintln(w, "| entity type | marked | found | exact | precision | recall | redaction recall |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|")
	var all counts
	for _, t := range types {
		c := byType[t]
		all.gold += c.gold
		all.found += c.found
		all.exact += c.exact
		all.covered += c.covered
		fmt.Fprintf(w, "| %s | %d | %d | %d | %s | %s | %s |\n", t, c.gold, c.found, c.exact, ratio(c.exact, c.found), ratio(c.exact, c.gold), ratio(c.covered, c.gold))
	}
	fmt.Fprintf(w, "| all | %d | %d | %d | %s | %s | %s |\n", all.gold, all.found, all.exact, ratio(all.exact, all.found), ratio(all.exact, all.gold), ratio(all.covered, all.gold))
	return nil
}

// utterance makes one utterance of words, one second a word.
func utterance(words []string) recognizer.Utterance {
	ws := make([]recognizer.Word, len(words))
	for i, w := range words {
		ws[i] = recognizer.Word{Word: w, Start: float64(i), End: float64(i) + 0.9, Confidence: 0.9}
	}
	return recognizer.Utterance{Text: strings.Join(words, " "), Words: ws, End: float64(len(words))}
}

// covered reports whether every word of g lies inside some found span.
func covered(g span, found []span) bool {
	for k := g.first; k <= g.last; k++ {
		if !slices.ContainsFunc(found, func(f span) bool { return k >= f.first && k <= f.last }) {
			return false
		}
	}
	return true
}

func show(words []string, found []span) string {
	var b strings.Builder
	for _, f := range found {
		fmt.Fprintf(&b, "[%s %s]", f.typ, strings.Join(words[f.first:f.last+1], " "))
	}
	if b.Len() == 0 {
		return "nothing"
	}
	return b.String()
}

func ratio(n, d int) string {
	if d == 0 {
		return "–"
	}
	return fmt.Sprintf("%.3f", float64(n)/float64(d))
}
