package pii

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/addons/ner"
)

// maxHeld bounds the finals a Stream holds back on one channel: a card
// read one digit an utterance has 19.
const maxHeld = 19

// Stream redacts a live session's utterances as they go out, one final at
// a time. A number read in groups is often cut into several finals at the
// pauses between the groups, and no group alone is recognisable, so a
// final that ends in digits is held back until the channel's next final
// shows whether the number goes on (or until MaxAcrossGap of audio has
// passed, Due, or the session ends, Flush); the held finals are then found
// and redacted together (ner.Find joins their digit runs) and released in
// order. Finals that do not end in digits go out at once, with those held
// before them. A partial is redacted against the finals held on its
// channel, and its own trailing digits, which may be the start of a number
// not yet said, are masked.
//
// A Stream is owned by one goroutine (the session's); it holds at most
// maxHeld finals per channel.
type Stream struct {
	types []string
	mode  string
	held  []Final      // in arrival order, any channel
	found []ner.Entity // every entity redacted so far, times as found
}

// Final is a final utterance with the caller's ID for it (a live session's
// utterance number), which it keeps through being held back.
type Final struct {
	ID        int
	Utterance recognizer.Utterance
}

// NewStream returns a Stream redacting types (single types and presets as
// ner.Find takes them) in mode (Marker or Mask).
func NewStream(types []string, mode string) *Stream {
	return &Stream{types: slices.Clone(types), mode: mode}
}

// Final takes the channel's next final utterance f and returns the finals
// ready to go out, redacted, in order: none while f is held back.
func (s *Stream) Final(f Final) []Final {
	u := f.Utterance
	group := s.heldOn(u.Channel)
	var out []Final
	if len(group) > 0 && u.Start-group[len(group)-1].Utterance.End > ner.MaxAcrossGap {
		out = s.release(u.Channel)
		group = nil
	}
	s.held = append(s.held, f)
	if _, ok := ner.TrailingDigits(u); ok && len(group)+1 < maxHeld {
		return out
	}
	return append(out, s.release(u.Channel)...)
}

// Due releases, redacted, the finals held on every channel whose last
// held final ended more than MaxAcrossGap before now (seconds of audio):
// the number did not go on.
func (s *Stream) Due(now float64) []Final {
	var out []Final
	for _, ch := range s.channels() {
		if g := s.heldOn(ch); now-g[len(g)-1].Utterance.End > ner.MaxAcrossGap {
			out = append(out, s.release(ch)...)
		}
	}
	return out
}

// Flush releases every held final, redacted (the session ends).
func (s *Stream) Flush() []Final {
	var out []Final
	for _, ch := range s.channels() {
		out = append(out, s.release(ch)...)
	}
	return out
}

// Held reports how many finals are held back.
func (s *Stream) Held() int { return len(s.held) }

// Found returns the entities redacted so far (their Utterance indexes
// refer to the group they were found in, not to the session).
func (s *Stream) Found() []ner.Entity { return slices.Clone(s.found) }

// Partial returns the partial utterance u redacted: entities found in it
// with the finals held on its channel before it, and its trailing digits
// masked ("*" per character, whatever the mode).
func (s *Stream) Partial(u recognizer.Utterance) recognizer.Utterance {
	group := utterances(append(s.heldOn(u.Channel), Final{Utterance: u}))
	ents, _ := ner.Find(group, s.types)
	var mine []ner.Entity
	for _, e := range ents {
		if e.Utterance == len(group)-1 {
			e.Utterance = 0
			mine = append(mine, e)
		}
	}
	out := Redact([]recognizer.Utterance{u}, mine, s.mode)[0]
	first, ok := ner.TrailingDigits(out)
	if !ok {
		return out
	}
	ws := slices.Clone(ner.Words(out))
	for i := first; i < len(ws); i++ {
		if !strings.HasPrefix(ws[i].Word, "[") {
			ws[i].Word = strings.Repeat("*", utf8.RuneCountInString(ws[i].Word))
		}
	}
	texts := make([]string, len(ws))
	for i, w := range ws {
		texts[i] = w.Word
	}
	out.Words, out.Text = ws, strings.Join(texts, " ")
	return out
}

// release redacts and returns the finals held on channel ch.
func (s *Stream) release(ch int) []Final {
	group := s.heldOn(ch)
	if len(group) == 0 {
		return nil
	}
	s.held = slices.DeleteFunc(s.held, func(f Final) bool { return f.Utterance.Channel == ch })
	utts := utterances(group)
	ents, _ := ner.Find(utts, s.types)
	s.found = append(s.found, ents...)
	for i, u := range Redact(utts, ents, s.mode) {
		group[i].Utterance = u
	}
	return group
}

// heldOn returns a copy of the finals held on channel ch, in order.
func (s *Stream) heldOn(ch int) []Final {
	var g []Final
	for _, f := range s.held {
		if f.Utterance.Channel == ch {
			g = append(g, f)
		}
	}
	return g
}

func utterances(fs []Final) []recognizer.Utterance {
	out := make([]recognizer.Utterance, len(fs))
	for i, f := range fs {
		out[i] = f.Utterance
	}
	return out
}

// channels lists the channels with held finals, in order of first hold.
func (s *Stream) channels() []int {
	var chs []int
	for _, f := range s.held {
		if !slices.Contains(chs, f.Utterance.Channel) {
			chs = append(chs, f.Utterance.Channel)
		}
	}
	return chs
}
