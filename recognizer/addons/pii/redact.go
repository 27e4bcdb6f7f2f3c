package pii

import (
	"cmp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/addons/ner"
)

// Processed text types (pii_redaction_config.processed_text_type).
const (
	Marker = "MARKER" // an entity becomes one word "[TYPE]"
	Mask   = "MASK"   // each character of an entity's words becomes "*"
)

// span is one entity's words in one utterance, [first, last].
type span struct {
	typ         string
	first, last int
}

// Redact returns copies of utts with the words of every entity in ents
// replaced according to mode (Marker or Mask; anything else, including "",
// is Marker). An entity refers to its utterance by index and to its words
// by ner.Words indexes; entities pointing outside utts or outside the
// utterance's words are ignored. Overlapping entities are merged into one
// marker carrying the type of the one that starts first (the longer on a
// tie). The marker word keeps the first word's start, the last word's end
// and the lowest confidence among the words it replaces. Text is rebuilt
// as the words joined by single spaces. Utterances without entities are
// copied unchanged (their Words slice is shared only if not redacted).
func Redact(utts []recognizer.Utterance, ents []ner.Entity, mode string) []recognizer.Utterance {
	mask := strings.EqualFold(strings.TrimSpace(mode), Mask)
	byUtt := map[int][]span{}
	for _, e := range ents {
		if e.Utterance < 0 || e.Utterance >= len(utts) || e.FirstWord > e.LastWord {
			continue
		}
		byUtt[e.Utterance] = append(byUtt[e.Utterance], span{e.Type, e.FirstWord, e.LastWord})
	}
	out := make([]recognizer.Utterance, len(utts))
	copy(out, utts)
	for ui, spans := range byUtt {
		u := utts[ui]
		ws := ner.Words(u)
		spans = merge(spans, len(ws))
		if len(spans) == 0 {
			continue
		}
		var nw []recognizer.Word
		next := 0
		for _, s := range spans {
			nw = append(nw, ws[next:s.first]...)
			if mask {
				for _, w := range ws[s.first : s.last+1] {
					w.Word = strings.Repeat("*", utf8.RuneCountInString(w.Word))
					nw = append(nw, w)
				}
			} else {
				conf := ws[s.first].Confidence
				for _, w := range ws[s.first : s.last+1] {
					conf = min(conf, w.Confidence)
				}
				nw = append(nw, recognizer.Word{
					Word:       "[" + s.typ + "]",
					Start:      ws[s.first].Start,
					End:        ws[s.last].End,
					Confidence: conf,
				})
			}
			next = s.last + 1
		}
		nw = append(nw, ws[next:]...)
		texts := make([]string, len(nw))
		for i, w := range nw {
			texts[i] = w.Word
		}
		out[ui].Words = nw
		out[ui].Text = strings.Join(texts, " ")
	}
	return out
}

// merge clips spans to n words, sorts them and joins overlapping ones.
func merge(spans []span, n int) []span {
	var ok []span
	for _, s := range spans {
		s.first = max(s.first, 0)
		s.last = min(s.last, n-1)
		if s.first <= s.last {
			ok = append(ok, s)
		}
	}
	slices.SortFunc(ok, func(a, b span) int {
		if c := cmp.Compare(a.first, b.first); c != 0 {
			return c
		}
		return cmp.Compare(b.last, a.last)
	})
	var out []span
	for _, s := range ok {
		if len(out) > 0 && s.first <= out[len(out)-1].last {
			out[len(out)-1].last = max(out[len(out)-1].last, s.last)
			continue
		}
		out = append(out, s)
	}
	return out
}
