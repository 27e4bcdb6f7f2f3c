package ner

import (
	"cmp"
	"slices"
	"strings"

	"github.com/earshot-dev/earshot/recognizer"
)

// A number read aloud in groups is often cut into utterances at the
// pauses between the groups ("four one one one" / "one one one one" /
// ...), most of all in live sessions, whose endpointing ends an utterance
// at a short silence. Each piece alone is too short to be anything, so
// across joins the digit run that ends one utterance with the runs that
// start the next ones of the same channel and classifies the whole.

// MaxAcrossGap is the longest pause, in seconds, between two utterances
// whose digit runs Find reads as one number.
const MaxAcrossGap = 4.0

// maxAcrossPieces bounds the utterances one number is joined from (a card
// read one digit an utterance has 19).
const maxAcrossPieces = 19

// edge is an utterance's digit runs at its ends, in word indexes [first,
// end): head starts at the utterance's first word (after separators),
// tail ends at its last; whole is set when one run is the utterance.
type edge struct {
	ok                 bool
	headFirst, headEnd int
	headDigits         string
	tailFirst          int
	tailDigits         string
	whole              bool
	n                  int
	channel            int
	start, end         float64
	words              []recognizer.Word
}

// edgeOf finds toks' head and tail runs.
func edgeOf(u recognizer.Utterance, ws []recognizer.Word, toks []string) edge {
	e := edge{n: len(toks), channel: u.Channel, words: ws, tailFirst: -1, headEnd: -1}
	if len(ws) > 0 {
		e.start, e.end = ws[0].Start, ws[len(ws)-1].End
	}
	first := 0
	for first < len(toks) && (runSeparators[toks[first]] || toks[first] == "and") {
		first++
	}
	for i := first; i < len(toks); {
		d, end := numberRun(toks, i)
		if end == i {
			i++
			continue
		}
		if i == first {
			e.headFirst, e.headEnd, e.headDigits = i, end, d
		}
		if end == len(toks) {
			e.tailFirst, e.tailDigits = i, d
		}
		i = end
	}
	e.whole = e.headEnd == len(toks) && e.tailFirst == e.headFirst
	e.ok = e.headEnd > 0 || e.tailFirst >= 0
	return e
}

// piece is one utterance's part of a number joined across utterances.
type piece struct {
	utt, first, end int
}

// across finds numbers joined from two or more utterances' edge runs and
// returns one entity per piece, of the type the whole number is, for the
// types in want.
func across(edges []edge, want map[string]bool) []Entity {
	var out []Entity
	for k := 0; k < len(edges); k++ {
		if !edges[k].ok || edges[k].tailFirst < 0 {
			continue
		}
		pieces := []piece{{k, edges[k].tailFirst, edges[k].n}}
		digits := edges[k].tailDigits
		prev := k
		for j := k + 1; j < len(edges) && len(pieces) < maxAcrossPieces; j++ {
			ej := edges[j]
			if ej.n == 0 || ej.channel != edges[k].channel {
				continue // another channel's utterance between the pieces
			}
			if ej.headEnd <= 0 || ej.start-edges[prev].end > MaxAcrossGap {
				break
			}
			pieces = append(pieces, piece{j, ej.headFirst, ej.headEnd})
			digits += ej.headDigits
			prev = j
			if !ej.whole || len(digits) > 19 {
				break
			}
		}
		if len(pieces) < 2 {
			continue
		}
		// The longest prefix of pieces that makes a number wins.
		for len(pieces) >= 2 {
			typ := classify(digits, maxNationalPhone, nil, 0)
			if typ != "" && want[typ] {
				for _, p := range pieces {
					out = append(out, pieceEntity(edges[p.utt], p, typ, digits))
				}
				// Go on after the last piece, or from its utterance's
				// tail when that is another run than its head.
				last := pieces[len(pieces)-1]
				k = last.utt
				if e := edges[last.utt]; e.tailFirst >= e.headEnd {
					k--
				}
				break
			}
			last := pieces[len(pieces)-1]
			digits = digits[:len(digits)-len(edgeDigits(edges[last.utt], last))]
			pieces = pieces[:len(pieces)-1]
		}
	}
	return out
}

// edgeDigits are the digits of piece p of e.
func edgeDigits(e edge, p piece) string {
	if p.first == e.headFirst && p.end == e.headEnd {
		return e.headDigits
	}
	return e.tailDigits
}

func pieceEntity(e edge, p piece, typ, digits string) Entity {
	ws := e.words[p.first:p.end]
	text := make([]string, len(ws))
	for i, w := range ws {
		text[i] = w.Word
	}
	return Entity{
		Type: typ, Text: strings.Join(text, " "), Start: ws[0].Start, End: ws[len(ws)-1].End,
		Channel: e.channel, Utterance: p.utt, FirstWord: p.first, LastWord: p.end - 1, Value: digits,
	}
}

// mergeAcross puts the entities joined across utterances among those found
// in each: where they overlap, the joined one wins. The result is in
// utterance order, then word order.
func mergeAcross(ents, joined []Entity) []Entity {
	if len(joined) == 0 {
		return ents
	}
	out := slices.DeleteFunc(ents, func(e Entity) bool {
		return slices.ContainsFunc(joined, func(j Entity) bool {
			return j.Utterance == e.Utterance && j.FirstWord <= e.LastWord && e.FirstWord <= j.LastWord
		})
	})
	out = append(out, joined...)
	slices.SortFunc(out, func(a, b Entity) int {
		if c := cmp.Compare(a.Utterance, b.Utterance); c != 0 {
			return c
		}
		return cmp.Compare(a.FirstWord, b.FirstWord)
	})
	return out
}

// TrailingDigits returns the index of the first word of the digit run
// that ends u (spoken or written digits, as numberRun reads them), and
// whether there is one: the start of a number the next utterance may go
// on with. A live redactor holds such an utterance back until it knows.
func TrailingDigits(u recognizer.Utterance) (first int, ok bool) {
	ws := Words(u)
	if len(ws) == 0 {
		return 0, false
	}
	e := edgeOf(u, ws, tokens(ws))
	return e.tailFirst, e.tailFirst >= 0
}
