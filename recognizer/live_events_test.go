package recognizer_test

import (
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/recognizer"
)

// checkEvents asserts what every event stream must satisfy: per channel,
// speech_start and speech_end alternate (start first, all closed at the
// end) with non-decreasing times; partials and finals come only inside an
// utterance or right after its speech_end; final words are in session
// time, ordered, inside the audio; IDs are dense from 0 in order of first
// use and shared by an utterance's partials and final.
func checkEvents(t testing.TB, evs []recognizer.Event, channels int, seconds float64) {
	t.Helper()
	type chState struct {
		open     bool
		speechAt float64 // time of the last speech event
		emitAt   float64 // time of the last partial, final or error
		lastWord float64
		id       int // current utterance's ID, -1 none
	}
	st := make([]chState, channels)
	for i := range st {
		st[i].id = -1
	}
	nextID := 0
	for i, ev := range evs {
		if ev.Channel < 0 || ev.Channel >= channels {
			t.Fatalf("event %d: channel %d of %d", i, ev.Channel, channels)
		}
		s := &st[ev.Channel]
		last := &s.emitAt
		if ev.Kind == recognizer.EventSpeechStart || ev.Kind == recognizer.EventSpeechEnd {
			last = &s.speechAt
		}
		if ev.Time < *last-1e-9 || ev.Time > seconds+1e-9 {
			t.Errorf("event %d %v ch %d: time %.3f before %.3f or after the audio (%.3f)", i, ev.Kind, ev.Channel, ev.Time, *last, seconds)
		}
		*last = ev.Time
		switch ev.Kind {
		case recognizer.EventSpeechStart:
			if s.open {
				t.Errorf("event %d: speech_start on channel %d inside an utterance", i, ev.Channel)
			}
			s.open = true
		case recognizer.EventSpeechEnd:
			if !s.open {
				t.Errorf("event %d: speech_end on channel %d without speech_start", i, ev.Channel)
			}
			s.open = false
		case recognizer.EventPartial, recognizer.EventFinal:
			u := ev.Utterance
			if u.Channel != ev.Channel || u.Language != "en" || u.Text == "" {
				t.Errorf("event %d %v: utterance %+v", i, ev.Kind, u)
			}
			if ev.Kind == recognizer.EventPartial && !s.open {
				t.Errorf("event %d: partial outside speech on channel %d", i, ev.Channel)
			}
			if s.id < 0 {
				if ev.ID != nextID {
					t.Errorf("event %d %v: new utterance ID %d, want %d", i, ev.Kind, ev.ID, nextID)
				}
				nextID = max(nextID, ev.ID+1)
				s.id = ev.ID
			} else if ev.ID != s.id {
				t.Errorf("event %d %v: ID %d, want %d (same utterance)", i, ev.Kind, ev.ID, s.id)
			}
			if ev.Kind == recognizer.EventPartial {
				continue
			}
			s.id = -1
			if len(u.Words) == 0 || u.Text != joinWords(u.Words) {
				t.Errorf("event %d: final %+v", i, u)
				continue
			}
			if u.Start != u.Words[0].Start || u.End != u.Words[len(u.Words)-1].End {
				t.Errorf("event %d: final [%.2f, %.2f] vs its words", i, u.Start, u.End)
			}
			for _, w := range u.Words {
				if w.Start < s.lastWord-1e-9 || w.End < w.Start || w.End > ev.Time+1e-9 || w.Confidence < 0 || w.Confidence > 1 {
					t.Errorf("event %d: word %+v (previous end %.2f, final at %.2f)", i, w, s.lastWord, ev.Time)
				}
				s.lastWord = w.End
			}
		case recognizer.EventError:
			if ev.Err == nil {
				t.Errorf("event %d: error event without Err", i)
			}
		case recognizer.EventSegment:
			// Its IDs are checked by TestLiveSegmentEvents.
			if ev.Segment == nil || len(ev.Segment.IDs) == 0 || len(ev.Segment.Audio) == 0 {
				t.Errorf("event %d: segment %+v", i, ev.Segment)
			}
		default:
			t.Errorf("event %d: kind %v", i, ev.Kind)
		}
	}
	for c, s := range st {
		if s.open {
			t.Errorf("channel %d: utterance still open after Flush", c)
		}
	}
}

func joinWords(ws []recognizer.Word) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w.Word
	}
	return strings.Join(parts, " ")
}

// finals joins the final transcripts of one channel.
func finals(evs []recognizer.Event, channel int) string {
	var parts []string
	for _, ev := range evs {
		if ev.Kind == recognizer.EventFinal && ev.Channel == channel {
			parts = append(parts, ev.Utterance.Text)
		}
	}
	return strings.Join(parts, " ")
}

func count(evs []recognizer.Event, kind recognizer.EventKind) int {
	n := 0
	for _, ev := range evs {
		if ev.Kind == kind {
			n++
		}
	}
	return n
}

// speechSeconds sums speech_end - speech_start over all channels.
func speechSeconds(evs []recognizer.Event) float64 {
	open := map[int]float64{}
	var sum float64
	for _, ev := range evs {
		switch ev.Kind {
		case recognizer.EventSpeechStart:
			open[ev.Channel] = ev.Time
		case recognizer.EventSpeechEnd:
			sum += ev.Time - open[ev.Channel]
		}
	}
	return sum
}
