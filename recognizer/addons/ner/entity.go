package ner

import (
	"cmp"
	"slices"
	"strings"

	"github.com/earshot-dev/earshot/recognizer"
)

// Entity is one entity found in an utterance. Its words are
// Words(utts[Utterance])[FirstWord : LastWord+1]; Text is those words
// joined with single spaces, as the transcript has them; Start and End are
// the first word's start and the last word's end in seconds.
type Entity struct {
	Type, Text string
	Start, End float64
	Channel    int
	Utterance  int // index into the utterances given to Find
	FirstWord  int // index of the first word, inclusive
	LastWord   int // index of the last word, inclusive
	// Value is the entity in written form where there is one: the digits
	// of a phone, card or account number, "john.smith@example.com", an IP
	// address, "2024-03-03" for a full date, "15:30" for a time, "$20.50"
	// for money, the age in years. Empty otherwise.
	Value string
}

// cand is an entity candidate in token indexes, [first, end).
type cand struct {
	typ        string
	first, end int
	value      string
}

// Find detects entities of the given types (single types and presets, see
// Expand; empty means every supported type) in the utterances, which are
// read as recognisers write them: lower case words without punctuation,
// numbers spelled out. Each word belongs to at most one entity: where
// candidates overlap, the one covering more words wins, then the type
// earlier in Supported(). Entities are returned in utterance order, then
// word order. A number read in groups that the utterances cut apart is
// found across them (across.go): one entity per utterance it spans. Type
// names it does not know are returned in unsupported (in request order,
// upper case); that is not an error.
//
// Find is pure and safe for concurrent use; it costs a few microseconds
// per word.
func Find(utts []recognizer.Utterance, types []string) (ents []Entity, unsupported []string) {
	set, unknown := Expand(types)
	want := map[string]bool{}
	for _, t := range set {
		want[t] = true
	}
	edges := make([]edge, len(utts))
	for ui, u := range utts {
		ws := Words(u)
		if len(ws) == 0 {
			continue
		}
		toks := tokens(ws)
		edges[ui] = edgeOf(u, ws, toks)
		var keep []cand
		for _, c := range detect(toks) {
			if want[c.typ] && c.end > c.first && c.first >= 0 && c.end <= len(toks) {
				keep = append(keep, c)
			}
		}
		for _, c := range resolve(keep, len(toks)) {
			words := make([]string, 0, c.end-c.first)
			for _, w := range ws[c.first:c.end] {
				words = append(words, w.Word)
			}
			ents = append(ents, Entity{
				Type:      c.typ,
				Text:      strings.Join(words, " "),
				Start:     ws[c.first].Start,
				End:       ws[c.end-1].End,
				Channel:   u.Channel,
				Utterance: ui,
				FirstWord: c.first,
				LastWord:  c.end - 1,
				Value:     c.value,
			})
		}
	}
	return mergeAcross(ents, across(edges, want)), unknown
}

// resolve keeps non-overlapping candidates, longest first, then by type
// priority, then leftmost, and returns them in word order.
func resolve(cs []cand, n int) []cand {
	slices.SortStableFunc(cs, func(a, b cand) int {
		if c := cmp.Compare(b.end-b.first, a.end-a.first); c != 0 {
			return c
		}
		if c := cmp.Compare(priority(a.typ), priority(b.typ)); c != 0 {
			return c
		}
		return cmp.Compare(a.first, b.first)
	})
	used := make([]bool, n)
	var out []cand
	for _, c := range cs {
		free := true
		for k := c.first; k < c.end; k++ {
			if used[k] {
				free = false
				break
			}
		}
		if !free {
			continue
		}
		for k := c.first; k < c.end; k++ {
			used[k] = true
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b cand) int { return cmp.Compare(a.first, b.first) })
	return out
}

// detect runs every detector over one utterance's tokens and returns all
// candidates, overlapping ones included.
func detect(toks []string) []cand {
	var cs []cand
	cs = append(cs, detectEmailURL(toks)...)
	cs = append(cs, detectIP(toks)...)
	cs = append(cs, detectNumbers(toks)...)
	cs = append(cs, detectCodes(toks)...)
	cs = append(cs, detectDates(toks)...)
	cs = append(cs, detectTimes(toks)...)
	cs = append(cs, detectMoneyAge(toks)...)
	cs = append(cs, detectAddresses(toks)...)
	cs = append(cs, detectNames(toks)...)
	cs = append(cs, detectPlaces(toks)...)
	cs = append(cs, detectOrgs(toks)...)
	cs = append(cs, detectMedical(toks)...)
	return withCardContext(toks, cs)
}
