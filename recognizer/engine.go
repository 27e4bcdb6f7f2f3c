package recognizer

import "context"

// Word is one recognised word with its times in seconds. Times are relative
// to the start of the audio written to the Stream that produced it, until a
// pipeline shifts them to session or file time.
type Word struct {
	Word       string
	Start      float64
	End        float64
	Confidence float64 // 0..1
}

// Utterance is a stretch of speech on one channel: its words, their text
// joined with single spaces, and times in seconds.
type Utterance struct {
	Start      float64
	End        float64
	Confidence float64 // 0..1, mean of the word confidences
	Channel    int
	Words      []Word
	Text       string
	Language   string
}

// Hypothesis is a decoder's current best guess for an utterance in progress.
type Hypothesis struct {
	Text  string
	Words []Word
}

// StreamOptions configures one Stream.
type StreamOptions struct {
	// Language is the language code the stream decodes; empty means the
	// engine's first installed language.
	Language string
	// Vocabulary lists words and phrases the stream should recognise more
	// readily (a job's custom_vocabulary). Engines that cannot use it
	// ignore it; the embedded engine adds missing words to its dictionary
	// and raises the language-model weight of every listed word.
	Vocabulary []VocabularyWord
	// Prompt is text that guides an engine that takes one (a remote
	// engine's prompt: a job's custom_vocabulary as words); engines
	// without a prompt ignore it.
	Prompt string
	// Narrowband is set when the audio is band-limited to the telephone
	// band (a call at 8 kHz, brought to 16 kHz). An engine whose model is
	// wideband then searches wider (the embedded engine's live first-pass
	// search drops its cap on active HMMs, without which it lost a call's
	// words).
	Narrowband bool
	// Tenant names whom the stream decodes for (a live session's
	// account): an engine whose pool is shared fairly bounds the streams
	// one tenant holds at once (the embedded engine's live pools,
	// live.decoder_share). Empty: not counted (whole recordings).
	Tenant string
	// Record is set when the stream decodes a live session's recording
	// for its record (the batch pass): the session's words came from its
	// live pass already, so an engine may search more cheaply than for a
	// pre-recorded job (the embedded engine's wideband pool caps its
	// active HMMs, sphinx.Config.RecordMaxHMMsPerFrame). Others ignore it.
	Record bool
}

// VocabularyWord is one custom_vocabulary item as an engine takes it.
type VocabularyWord struct {
	// Value is a word or a phrase of words separated by spaces.
	Value string
	// Intensity, 0..1, is how strongly to favour Value: 0 only makes it
	// recognisable, 1 favours it as much as the engine allows. Callers
	// resolve a missing intensity (default_intensity, else their default)
	// before filling it in.
	Intensity float64
	// Pronunciations are alternative ways to say Value: phone strings of
	// the engine's phone set ("K AA1 R L") or respellings in letters
	// ("karl"). Engines that cannot use them ignore them.
	Pronunciations []string
}

// Engine turns 16 kHz mono PCM into text. Engines are heavy: an
// implementation holds a bounded pool of decoders, and NewStream waits for a
// free one until ctx ends (then it returns an error wrapping ErrAtCapacity).
// It takes a free one before it looks at ctx, so a ctx already done asks for
// one only if one is free now (Live's checkout at a speech start relies on
// it).
type Engine interface {
	// Name is a short identifier for logs and metadata ("sphinx").
	Name() string
	// Languages lists the language codes this engine serves.
	Languages() []string
	// NewStream checks out a decoder for one utterance stream.
	NewStream(ctx context.Context, o StreamOptions) (Stream, error)
}

// Stream decodes one channel. It is not safe for concurrent use. Write feeds
// audio, Finish ends the current utterance and returns it (the stream may be
// written again afterwards for the next utterance, times restarting at 0),
// Close returns the decoder to its pool.
type Stream interface {
	Write(pcm []int16) error     // 16 kHz mono, any length
	Partial() (Hypothesis, bool) // cheap; false when nothing yet
	Finish() (Utterance, error)  // end of utterance: words, times, confidence
	Close() error                // idempotent
}

// SampleRate is the only rate streams accept.
const SampleRate = 16000

// Chooser is implemented by streams that can score given word sequences
// against audio, each the same way (the embedded engine's acoustic and
// language models, as its own search weighs them): Choose returns the
// index of the alternative that fits pcm best. A live session's stored
// record takes, stretch by stretch, the better of its live finals and
// its batch pass by it (daemon/live/combine.go).
type Chooser interface {
	Choose(pcm []int16, alternatives [][]string) (int, error)
}
