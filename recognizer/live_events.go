package recognizer

import "slices"

// The events Live emits besides speech starts and ends and segmented
// finals (live_segment.go): partials of an utterance decoded on its own,
// errors, and the utterance IDs they share.

// partial emits the decoder's current hypothesis, on cadence: every
// PartialInterval of audio from the speech start, whether or not the text
// changed since the last one (so clients see progress), once there is a
// hypothesis.
func (l *Live) partial(ch *liveChannel, t1 int64) {
	for ch.nextPartial <= t1 {
		ch.nextPartial += l.partialEvery
	}
	if ch.st == nil {
		return
	}
	if l.segmented(ch) {
		l.pathPartial(ch, t1)
		return
	}
	h, ok := ch.st.Partial()
	if !ok || h.Text == "" {
		return
	}
	off := seconds64(ch.uttStart)
	u := Utterance{
		Start:    seconds64(ch.speechStart),
		End:      seconds64(t1),
		Channel:  ch.index,
		Text:     h.Text,
		Language: l.lang,
	}
	if len(h.Words) > 0 {
		u.Words = slices.Clone(h.Words)
		for i := range u.Words {
			u.Words[i].Start += off
			u.Words[i].End += off
		}
	}
	l.emit(Event{Kind: EventPartial, Channel: ch.index, Time: seconds64(t1), Utterance: u, ID: l.utteranceID(ch)})
}

func (l *Live) fail(ch *liveChannel, t1 int64, err error) {
	l.emit(Event{Kind: EventError, Channel: ch.index, Time: seconds64(t1), Err: err})
}

// utteranceID returns the channel's current utterance ID, assigning the
// next one on first use.
func (l *Live) utteranceID(ch *liveChannel) int {
	if ch.id < 0 {
		for i := range ch.due {
			// Finals still waiting for their lookahead come first.
			if ch.due[i].id < 0 {
				ch.due[i].id = l.nextID
				l.nextID++
			}
		}
		ch.id = l.nextID
		l.nextID++
	}
	return ch.id
}
