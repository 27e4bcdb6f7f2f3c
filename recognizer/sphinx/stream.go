package sphinx

import (
	"strings"

	"github.com/earshot-dev/earshot/recognizer"
)

// Stream decodes one channel on a decoder checked out of the Engine's
// pool. Not safe for concurrent use. Write decodes incrementally (the
// utterance starts with the first non-empty Write), so Partial is cheap and
// Finish only runs the final passes. Close returns the decoder.
type Stream struct {
	e    *Engine
	d    *decoder // nil after Close
	lang string
	// tenant is StreamOptions.Tenant: its share of the pool counts the
	// stream until Close (share.go).
	tenant string
	// record is StreamOptions.Record: Decode searches with the decoder's
	// record search (useRecord).
	record bool
	// pending is audio written but not yet decoded (see writeBlock); err
	// is the failure of a decode that a reader started (Path, Partial),
	// which the next Write or Finish returns.
	pending []int16
	err     error
}

// writeBlock is how much audio Write gathers before it decodes: a live
// session writes 10 ms at a time, and decoding each as it comes made the
// decoder's tables come back cold into the CPU's caches a hundred times a
// second (a 2-CPU VM: one narrowband call cost 0.39 CPU s per second of
// audio in 20 ms WebSocket messages, 0.27 in 200 ms ones). Whatever reads
// the decoder (Partial, Path, Finish) decodes what is pending first, so
// no result waits for a block to fill.
const writeBlock = recognizer.SampleRate / 5

var _ recognizer.Stream = (*Stream)(nil)

// Write feeds 16 kHz mono samples to the current utterance.
func (s *Stream) Write(pcm []int16) error {
	if s.d == nil {
		return errClosedStream
	}
	if s.err != nil {
		return s.err
	}
	if len(pcm) == 0 {
		return nil
	}
	if err := s.d.start(); err != nil {
		return err
	}
	s.pending = append(s.pending, pcm...)
	if len(s.pending) < writeBlock {
		return nil
	}
	return s.flush(false)
}

// flush decodes the pending audio (inside the engine's gate, as Finish's
// lattice pass) and refreshes a primed stream's live mean with it. A
// reader's flush (Path, Partial, Finish: read) goes through the gate ahead
// of the blocks of streams decoding as their audio comes (CPU.LiveRead).
func (s *Stream) flush(read bool) error {
	if s.err != nil || len(s.pending) == 0 {
		return s.err
	}
	gate := s.e.cpu.LiveDecode
	if read {
		gate = s.e.cpu.LiveRead
	}
	gate(func() {
		s.err = s.d.process(s.pending, false)
		s.d.refreshCMN()
	})
	s.pending = s.pending[:0]
	return s.err
}

// Partial returns the decoder's current best guess (text only, no word
// times), false when the utterance has no words yet.
func (s *Stream) Partial() (recognizer.Hypothesis, bool) {
	if s.d == nil || !s.d.inUtt || s.flush(true) != nil {
		return recognizer.Hypothesis{}, false
	}
	words := cleanHyp(s.d.hyp())
	if len(words) == 0 {
		return recognizer.Hypothesis{}, false
	}
	return recognizer.Hypothesis{Text: strings.Join(words, " ")}, true
}

// Finish ends the current utterance and returns its words with times in
// seconds from the utterance's first sample and posterior confidences. An
// utterance with no words (or no audio) gives an Utterance with no Words.
// The stream may then be written again; times restart at 0.
func (s *Stream) Finish() (recognizer.Utterance, error) {
	if s.d == nil {
		return recognizer.Utterance{}, errClosedStream
	}
	if err := s.flush(true); err != nil {
		s.d.reset()
		s.err = nil // the stream may be written again
		return recognizer.Utterance{}, err
	}
	var words []recognizer.Word
	var err error
	s.e.cpu.LiveRead(func() { words, err = s.d.end() })
	if err != nil {
		return recognizer.Utterance{}, err
	}
	return utterance(words, s.lang), nil
}

// Decode decodes pcm as one complete utterance in a single pass and returns
// it, as Write(pcm) followed by Finish would, but with cepstral mean
// normalisation computed over the whole utterance, as pocketsphinx_batch
// does for a file, instead of the running estimate incremental decoding
// must use. Batch pipelines use it when they have the whole segment. An
// utterance left open by Write is discarded first.
func (s *Stream) Decode(pcm []int16) (recognizer.Utterance, error) {
	if s.d == nil {
		return recognizer.Utterance{}, errClosedStream
	}
	s.pending, s.err = s.pending[:0], nil
	s.d.reset()
	if s.record {
		s.d.useRecord()
	}
	if len(pcm) == 0 {
		return utterance(nil, s.lang), nil
	}
	if err := s.d.start(); err != nil {
		return recognizer.Utterance{}, err
	}
	if err := s.d.process(pcm, true); err != nil {
		s.d.reset()
		return recognizer.Utterance{}, err
	}
	words, err := s.d.end()
	if err != nil {
		return recognizer.Utterance{}, err
	}
	return utterance(words, s.lang), nil
}

// Close returns the decoder to the pool (discarding an unfinished
// utterance). Idempotent.
func (s *Stream) Close() error {
	if s.d == nil {
		return nil
	}
	d := s.d
	s.d, s.pending = nil, nil
	s.e.release(d, s.tenant)
	return nil
}

func utterance(words []recognizer.Word, lang string) recognizer.Utterance {
	u := recognizer.Utterance{Words: words, Language: lang}
	if len(words) == 0 {
		return u
	}
	texts := make([]string, len(words))
	var sum float64
	for i, w := range words {
		texts[i] = w.Word
		sum += w.Confidence
	}
	u.Start = words[0].Start
	u.End = words[len(words)-1].End
	u.Confidence = sum / float64(len(words))
	u.Text = strings.Join(texts, " ")
	return u
}

// SetCMNFrom starts the stream's live cepstral mean normalisation from the
// mean cepstrum of pcm, audio of the same channel (its recent utterances
// and what has come of the current one), instead of the model's initial
// mean: the incremental decode is then normalised as a batch decode over
// that audio would be. The start counts as the frames of pcm (at most
// 5 s), and as the stream decodes the mean becomes the running mean of
// that start and the audio since, refreshed every second (decoder.setCMNFrom).
// Call it before the first Write of an utterance; it does nothing when pcm
// is too short for a frame.
func (s *Stream) SetCMNFrom(pcm []int16) {
	if s.d != nil {
		s.d.setCMNFrom(pcm)
	}
}

// Path returns the words of the open utterance's best path so far, from
// the first search pass, with times in seconds from the utterance's first
// sample, without ending the utterance (cheap: a walk back through the
// search's word exits). Their confidence is the word's acoustic score per
// frame mapped to 0..1 (the posteriors of Finish need the lattice of an
// ended utterance). Nil when no utterance is open.
func (s *Stream) Path() []recognizer.Word {
	if s.d == nil || !s.d.inUtt || s.flush(true) != nil {
		return nil
	}
	return s.d.words()
}

// Pending is how many written samples wait for the next block decode
// (Write gathers writeBlock): 0 right after one, when Path decodes nothing
// first.
func (s *Stream) Pending() int { return len(s.pending) }

// FirstPassOnly makes the stream decode with the first search pass only,
// for a caller that takes its words from Path: the second pass, which
// only Finish uses, is not run at the end of its utterances; Finish gives
// the best path through the first pass's lattice, with posterior
// confidences (a decoder holding a vocabulary keeps its own search). Call
// it before the first Write of an utterance; it lasts until Close. The
// search keeps the decoder's -maxhmmpf (decoder.useFirstPass); live
// streams of wideband audio belong on the live pool (NewLive, Engine.Live),
// whose decoders search with the capped first pass from the start.
func (s *Stream) FirstPassOnly() {
	if s.d != nil {
		s.d.useFirstPass()
	}
}

// Lean switches the stream, before its first Write, to its decoder's lean
// search (on) or back to the full one and reports whether it is on the
// lean search: only the telephone model's live pool has one
// (Config.OverloadMaxHMMsPerFrame).
func (s *Stream) Lean(on bool) bool {
	if s.d == nil {
		return false
	}
	return s.d.useLean(on)
}

// HasLean reports whether the stream's decoder has a lean search (Lean
// can switch to it; decoder.canLean).
func (s *Stream) HasLean() bool {
	return s.d != nil && s.d.canLean()
}
