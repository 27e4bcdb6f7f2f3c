package recognizer

import "slices"

// A revised final (LiveConfig.Segments): a live final is read from the
// first pass of a decoder segment that normalises its features by a
// running mean, within 800 ms of its words; a batch decode of the same
// audio normalises over the whole segment, future included, and runs
// every pass. On the corpus's held-out readers, finals from such a
// re-decode of each live segment at its end came within 1.6 (mu-law) and
// 3.5 (A-law) points of batch, against 4.2 and 5.8 for the live finals
// (docs/live-tuning.md, 2026-11-29). Live does not decode it: it hands
// the segment's audio and the IDs of its finals to the caller at the
// segment's end (EventSegment), who decodes it where it likes (the
// daemon: the batch pool, on a thread below the live decodes) and tells
// its clients which finals the result replaces.

// segmentEnded emits EventSegment for the channel's segment ending at
// now (its audio is ch.utt, from ch.uttStart) when it gave finals, and
// forgets them. Off (LiveConfig.Segments false) it does nothing.
func (l *Live) segmentEnded(ch *liveChannel, now int64) {
	if !l.cfg.Segments || len(ch.segIDs) == 0 {
		return
	}
	seg := &LiveSegment{Start: seconds64(ch.uttStart), Audio: slices.Clone(ch.utt), IDs: slices.Clone(ch.segIDs)}
	ch.segIDs = ch.segIDs[:0]
	l.emit(Event{Kind: EventSegment, Channel: ch.index, Time: seconds64(now), Segment: seg})
}
