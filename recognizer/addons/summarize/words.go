package summarize

import (
	"strings"

	"github.com/earshot-dev/earshot/recognizer/addons/sentences"
)

// stopWords carry no topic.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all also am an and any are as at be
	because been before being below between both but by can could did do does doing done down during each
	else even ever every few for from further get gets got had has have having he her here hers herself him
	himself his how however i if in into is it its itself just like made make many may me might more most
	much must my myself no nor not now of off on once one only or other our ours ourselves out over own
	per quite rather really said same say says see shall she should since so some such than that the their
	theirs them themselves then there these they thing things this those though through thus to too under
	until up upon us very was way we well were what when where whether which while who whom whose why will
	with within without would yes yet you your yours yourself yourselves okay oh uh um yeah going go know
	think want right let lets also two three four five six seven eight nine ten first second new`) {
		m[w] = true
	}
	return m
}()

// term is a content word: its stem and the form it was spoken in.
type term struct{ stem, surface string }

// terms returns the content words of a sentence in order; -1 marks where a
// stop word interrupted them (phrases do not cross it).
func terms(text string) []term {
	var out []term
	for _, f := range strings.Fields(text) {
		w := sentences.Normalize(f)
		if len(w) < 3 || stopWords[w] || strings.ContainsAny(w, "0123456789'") {
			out = append(out, term{})
			continue
		}
		out = append(out, term{stem(w), w})
	}
	return out
}

// stem strips common English inflections so that "types" and "type",
// "printing" and "printed" count as one word. It is deliberately light
// (Porter step 1 style), never leaving fewer than three letters.
func stem(w string) string {
	for _, suf := range []string{"sses", "ches", "shes", "xes", "zes"} {
		if strings.HasSuffix(w, suf) && len(w)-2 >= 3 {
			return w[:len(w)-2]
		}
	}
	for _, suf := range []string{"ingly", "edly", "ings", "ing", "ies", "ied", "ness", "ments", "ment", "ed", "s", "ly"} {
		if strings.HasSuffix(w, suf) && len(w)-len(suf) >= 3 {
			base := w[:len(w)-len(suf)]
			if suf == "ies" || suf == "ied" {
				return base + "y"
			}
			if suf == "s" && (strings.HasSuffix(base, "s") || strings.HasSuffix(base, "u") || strings.HasSuffix(base, "i")) {
				return w // "class", "status", "analysis"
			}
			if n := len(base); n >= 2 && base[n-1] == base[n-2] && !strings.ContainsRune("lsz", rune(base[n-1])) &&
				(suf == "ing" || suf == "ed") {
				base = base[:n-1] // "stopped" → "stop"
			}
			return base
		}
	}
	return w
}
