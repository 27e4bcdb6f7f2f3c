package pii

import (
	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/recognizer/addons/ner"
)

// AudioGuard is the margin, in seconds, blanked on each side of a
// redacted entity's words in the stored audio: word times are the
// recogniser's estimate, and a word's first or last sound may lie a frame
// or a few outside them.
const AudioGuard = 0.08

// AudioSpans returns the stretches of audio that hold the entities' words:
// each entity's first word's start to its last word's end (Entity.Start,
// Entity.End), widened by AudioGuard on each side, sorted and joined.
func AudioSpans(ents []ner.Entity) []media.Span {
	spans := make([]media.Span, 0, len(ents))
	for _, e := range ents {
		spans = append(spans, media.Span{Start: e.Start, End: e.End})
	}
	return media.PadSpans(spans, AudioGuard)
}
