package recognizer

import (
	"context"
	"fmt"
	"math"
	"strings"
)

// pathReader is implemented by streams that can report the words of their
// open utterance's best path so far without ending it (sphinx): Live then
// decodes a channel in segments as a batch decode does, one decoder
// utterance through the short pauses between the contract's utterances,
// and takes each utterance's final from the segment's best path when the
// utterance's endpoint comes.
//
// A pause of the contract's endpointing (50 ms by default) ends an
// utterance; a batch segment runs on through pauses shorter than its
// VADConfig.MinSilence (500 ms). Decoding each short utterance on its own
// loses the words before it (the language model's context), normalises
// its features over a second or two, and makes the search end at every
// cut: measured on the corpus tuning set, that was about half of the gap
// between live finals and batch (bench/README.md). So the decoder goes on
// through the pause, the audio of the pause included, until the pause
// reaches liveSegmentPause or the segment liveSegmentMax; each final holds
// the words of the segment's path whose middle lies after the previous
// final's cut and before its own endpoint, read a lookahead after it, or
// of the segment's result (Finish: the best path through the first pass's
// lattice) when the segment ends first (finishDue).
type pathReader interface {
	// Path returns the words of the open utterance's best path so far,
	// times from the stream's first sample of that utterance.
	Path() []Word
}

// firstPassOnly is implemented by path streams whose second search pass
// (which only Finish uses) can be turned off: a segmented channel's finals
// come from the first pass and its lattice, so ending a segment costs only
// the lattice's best path.
type firstPassOnly interface {
	FirstPassOnly()
}

// pendingReader is implemented by path streams that decode their audio in
// blocks (sphinx): Pending is how many written samples wait for the next
// block, 0 right after one. Live reads the path for a path-ended
// utterance (pathEnded) only then, so the read decodes nothing of its own.
type pendingReader interface {
	Pending() int
}

// segmented reports whether the channel's finals come from its decoder
// segment's path (incremental decoding on a pathReader stream).
func (l *Live) segmented(ch *liveChannel) bool {
	if ch.st == nil || !l.incremental() {
		return false
	}
	_, ok := ch.st.(pathReader)
	return ok
}

// pause feeds one frame of a pause between utterances to the open segment
// and ends the segment once the pause is liveSegmentPause long (or the
// segment liveSegmentMax), unless speech starts at this frame.
func (l *Live) pause(ch *liveChannel, frame []int16, t1 int64, started bool) {
	l.feed(ch, frame, t1)
	ch.silence += int64(len(frame))
	if !started && (ch.silence >= l.segPause || t1-ch.uttStart >= l.segMax || ch.st == nil) {
		l.endSegment(ch)
	}
}

// endSegment emits the segment's finals still due, returns its decoder
// and keeps its audio for the next one's normalisation.
func (l *Live) endSegment(ch *liveChannel) {
	if ch.st != nil && len(ch.due) > 0 {
		if err := l.finishDue(ch, ch.pos); err != nil {
			l.fail(ch, ch.pos, err)
		}
	}
	ch.due = ch.due[:0] // without a decoder (it failed, reported) they are dropped
	if ch.st != nil {
		l.release(ch)
	}
	ch.seg = false
	l.segmentEnded(ch, ch.pos)
	l.remember(ch)
	ch.utt = ch.utt[:0]
}

// restartSegment ends the segment's decoder utterance at t1 and starts
// the next one there on the same stream (a segment too long without a
// pause).
func (l *Live) restartSegment(ch *liveChannel, t1 int64) {
	if err := l.finishDue(ch, t1); err != nil {
		l.release(ch)
		l.fail(ch, t1, err)
	}
	l.segmentEnded(ch, t1)
	l.remember(ch)
	ch.utt = ch.utt[:0]
	ch.uttStart, ch.cutAt, ch.idleCut = t1, t1, 0
	if ch.st != nil {
		l.primeCMN(ch)
	}
}

// dueFinal is a segmented final waiting for its lookahead: the words of
// the segment's path whose middle lies in [from, before), read once the
// decoder has had liveFinalLookahead of audio past at.
type dueFinal struct {
	from, before, at int64
	id               int // -1 until a partial or a later utterance's ID needs it
}

// pathWords returns the words of the segment's path whose middle lies in
// [from, until), in session time.
func (l *Live) pathWords(ch *liveChannel, from, until int64) []Word {
	return segmentWords(ch.st.(pathReader).Path(), ch.uttStart, from, until)
}

// segmentWords returns the words of a segment starting at session sample
// start (times from its start) whose middle lies in [from, until), in
// session time.
func segmentWords(words []Word, start, from, until int64) []Word {
	off := seconds64(start)
	lo, hi := seconds64(from), seconds64(until)
	var out []Word
	for _, w := range words {
		w.Start += off
		w.End += off
		if mid := (w.Start + w.End) / 2; mid >= lo && mid < hi {
			out = append(out, w)
		}
	}
	return out
}

// pathFinal makes the final of the utterance ending at t1 due: the
// segment's path words from the last cut up to before (t1, or earlier at
// a cut without an endpoint, where the last words may still change); the
// cut moves there. The words are read liveFinalLookahead later (emitDue),
// counted from the end of the path's last word so far when that is earlier
// than the VAD's speech end (plus endpoint and hangover): the VAD holds
// speech through a trailing breath, fricative or room noise, up to 0.6 s
// after the last word, and the final's lookahead is for the path after its
// words, not after the VAD's end. Measured on the corpus tuning set the finals'
// WER was the same, and livebench's one wideband session's latest final
// came 682 ms after its words instead of 812 (docs/live-tuning.md,
// 2026-11-28 03:40 UTC).
func (l *Live) pathFinal(ch *liveChannel, t1, before int64) {
	at := t1
	if ws := l.pathWords(ch, ch.cutAt, before); len(ws) > 0 {
		at = min(at, int64(ws[len(ws)-1].End*SampleRate)+l.endpoint+l.hangover)
	}
	ch.due = append(ch.due, dueFinal{from: ch.cutAt, before: before, at: at, id: ch.id})
	ch.cutAt = max(ch.cutAt, before)
	ch.id = -1
	l.emitDue(ch, t1, false)
}

// pathEnded reports whether the utterance's words have ended by the
// segment's path although the VAD still holds speech: the path has words
// since the last cut, and none has ended within the endpoint, hangover and
// livePathStall of t1 (the session's endpointing is kept). The VAD
// holds speech through a trailing breath, room noise or a soft onset of
// the next sound, up to 0.6 s past the last word, and a final made due at
// its endpoint then came up to 0.9 s after its last audio under load
// (issue 41, bench/CALLS.md 2026-11-29). The path is read only right after
// a block decode (pendingReader), so about every 200 ms of audio and at
// no decode of its own.
func (l *Live) pathEnded(ch *liveChannel, t1 int64) bool {
	if !l.segmented(ch) || l.hangover == 0 {
		return false
	}
	if p, ok := ch.st.(pendingReader); !ok || p.Pending() > 0 {
		return false
	}
	ws := l.pathWords(ch, ch.cutAt, t1+1)
	return len(ws) > 0 && int64(ws[len(ws)-1].End*SampleRate)+l.pathStall <= t1
}

// hangoverPathEnded applies the path-ended rule in the utterance's
// hangover too (endpoint to endpoint + hangover, the endpoint's frame
// included), as before its endpoint: the final is due at once, as at a
// cut, and the hangover goes on (its close makes a final of any words the
// path has after the cut). When the VAD held speech past the last word by
// a little more than livePathStall, its endpoint came before the next
// block read, and the final was due only at the hangover's end: up to 0.78 s
// after its last word instead of 0.65 (TestLivePathEndedInHangover; issue
// 41, bench/CALLS.md 2026-11-29).
func (l *Live) hangoverPathEnded(ctx context.Context, ch *liveChannel, t1 int64) error {
	if l.pathEnded(ch, t1) {
		return l.cut(ctx, ch, t1)
	}
	return nil
}

// emitDue emits the channel's due finals whose lookahead has passed by
// now, or all of them (the segment ends). Without a decoder (it failed,
// reported) they are dropped.
func (l *Live) emitDue(ch *liveChannel, now int64, all bool) {
	for len(ch.due) > 0 && (all || ch.due[0].at+l.lookahead <= now) {
		d := ch.due[0]
		ch.due = ch.due[:copy(ch.due, ch.due[1:])]
		if ch.st == nil {
			continue
		}
		l.emitDueFinal(ch, d, l.pathWords(ch, d.from, d.before), now)
	}
}

// finishDue ends the segment's decoder utterance (Finish: the search's
// passes after the first; for a first-pass-only stream the best path
// through its lattice) and emits all its due finals from that result, the
// last of them with every word left (no later final reads the segment).
// The decoder stays checked out; on an error the due finals are dropped.
func (l *Live) finishDue(ch *liveChannel, now int64) error {
	due := ch.due
	ch.due = ch.due[:0]
	u, err := ch.st.Finish()
	if err != nil {
		return fmt.Errorf("recognizer: live channel %d at %.2fs: finish: %w", ch.index, seconds64(now), err)
	}
	for i, d := range due {
		until := d.before
		if i == len(due)-1 {
			until = math.MaxInt64
		}
		l.emitDueFinal(ch, d, segmentWords(u.Words, ch.uttStart, d.from, until), now)
	}
	return nil
}

// emitDueFinal emits a due final of words (none: nothing).
func (l *Live) emitDueFinal(ch *liveChannel, d dueFinal, words []Word, now int64) {
	for i := range words {
		// The path (or the lattice's best path) may have moved a boundary
		// before the end of a word already emitted.
		w := &words[i]
		w.Start = max(w.Start, ch.wordsEnd)
		w.End = max(w.End, w.Start)
		ch.wordsEnd = w.End
	}
	if len(words) == 0 {
		return
	}
	if d.id < 0 {
		d.id = l.nextID
		l.nextID++
	}
	l.emit(Event{Kind: EventFinal, Channel: ch.index, Time: seconds64(max(now, d.at)),
		Utterance: l.utterance(ch, words), ID: d.id})
	if l.cfg.Segments {
		ch.segIDs = append(ch.segIDs, d.id)
	}
}

// pathPartial emits the current utterance's words of the segment's path,
// after the finals still due (so an utterance's final comes before the
// next one's partials, its lookahead cut short).
func (l *Live) pathPartial(ch *liveChannel, t1 int64) {
	l.emitDue(ch, t1, true)
	words := l.pathWords(ch, ch.cutAt, t1+1)
	if len(words) == 0 {
		return
	}
	u := l.utterance(ch, words)
	u.Start, u.End = seconds64(ch.speechStart), seconds64(t1)
	l.emit(Event{Kind: EventPartial, Channel: ch.index, Time: seconds64(t1), Utterance: u, ID: l.utteranceID(ch)})
}

// utterance makes the channel's utterance of words.
func (l *Live) utterance(ch *liveChannel, words []Word) Utterance {
	return WordsUtterance(words, ch.index, l.lang)
}

// WordsUtterance is the utterance of words (at least one) on channel in
// lang: their span, text and mean confidence.
func WordsUtterance(words []Word, channel int, lang string) Utterance {
	texts := make([]string, len(words))
	var sum float64
	for i, w := range words {
		texts[i] = w.Word
		sum += w.Confidence
	}
	return Utterance{
		Start:      words[0].Start,
		End:        words[len(words)-1].End,
		Confidence: sum / float64(len(words)),
		Channel:    channel,
		Words:      words,
		Text:       strings.Join(texts, " "),
		Language:   lang,
	}
}
