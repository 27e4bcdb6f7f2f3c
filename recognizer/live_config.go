package recognizer

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/earshot-dev/earshot/params"
)

// LiveConfig configures one live session's recognition (all channels).
// The zero value plus SetDefaults is the contract's default session.
type LiveConfig struct {
	// Channels is the number of audio channels, 1..8. Default 1.
	Channels int `yaml:"channels"`
	// Language is the language code to decode; "" means the engine's
	// first language.
	Language string `yaml:"language"`
	// Endpointing is the session's, as params decoded and bounded it
	// (params.Endpointing): no default here, and NewLive refuses one
	// outside params' bounds (params.DefaultEndpointing for code that
	// builds a config). Silence ends an utterance; the VAD decides in
	// 10 ms frames, so it is rounded up to a multiple of 10 ms.
	// MaxUtterance cuts an utterance (a final is emitted and a new
	// utterance begins at once, without speech events) when it has run
	// this long without an endpoint; in the last 1.5 s before the limit a
	// pause of 30 ms is enough to end the utterance, so the cut rarely
	// falls inside a word.
	Endpointing params.Endpointing `yaml:"-"`
	// SpeechThreshold is 0..1; closer to 1 is stricter against background
	// sound. A 10 ms frame starts speech when its energy is 4+12*threshold
	// dB above the adaptive noise floor (11.2 dB at the default 0.6), and
	// keeps an utterance alive when 9 dB less than that (at least 3 dB).
	// Nil means the default, 0.6; 0 is the most sensitive setting (a
	// pointer, so that an asked 0 is not taken for unset).
	SpeechThreshold *float64 `yaml:"speech_threshold"`
	// AudioEnhancer runs SpeexDSP noise suppression and AGC on each
	// channel before the VAD and the decoder. Default false.
	AudioEnhancer bool `yaml:"audio_enhancer"`
	// Partials enables partial transcripts during speech.
	Partials bool `yaml:"partials"`
	// OnePassFinals decodes each utterance in one pass when it ends, with
	// its features normalised over the whole utterance, instead of as it
	// arrives (partials, when asked, still come from an incremental decode,
	// which then doubles the CPU). The final then comes only after the
	// whole utterance is decoded again after its end, and without the words
	// before it; the incremental decode in segments (live_segment.go) is as
	// accurate at 8 kHz (bench/README.md) at less CPU and latency, so the
	// daemon no longer sets it.
	OnePassFinals bool `yaml:"one_pass_finals"`
	// PartialInterval is the cadence of partials, in audio time, during
	// speech, 20ms..500ms. Default 250ms.
	PartialInterval time.Duration `yaml:"partial_interval"`
	// DecoderWait is how long Write waits for a free decoder for an
	// utterance that found none free (a speech start does not wait: the
	// utterance's audio is kept and a decoder taken when one is free), at
	// its final or cut, 1ms..60s; after that the utterance gets an
	// EventError wrapping ErrAtCapacity (its speech events still come).
	// Default 3s.
	DecoderWait time.Duration `yaml:"decoder_wait"`
	// Detect asks the engine to detect the language of each utterance
	// (an engine that can takes an empty StreamOptions.Language as
	// "detect"): Language must be "". Per session, not configuration.
	Detect bool `yaml:"-"`
	// Vocabulary and Prompt are passed to every stream (StreamOptions):
	// a session's custom vocabulary. Per session, not configuration.
	Vocabulary []VocabularyWord `yaml:"-"`
	Prompt     string           `yaml:"-"`
	// Narrowband is passed to every stream (StreamOptions): the session's
	// audio is telephone-band (below 16 kHz). Per session, not
	// configuration.
	Narrowband bool `yaml:"-"`
	// Tenant is passed to every stream (StreamOptions): the session's
	// account, whose share of a pool the engine may bound. Per session,
	// not configuration.
	Tenant string `yaml:"-"`
	// BoxLoad is the process's meter of the box's CPU use, shared by its
	// sessions: while the box is short of CPU, a share of their segments
	// starts on the lean search of decoders that have one. Nil: each
	// session judges by its own decode speed alone. Not configuration.
	BoxLoad *BoxLoad `yaml:"-"`
	// Segments asks for an EventSegment at the end of each decoder
	// segment that gave finals (live_revision.go): its audio and the IDs
	// of its finals, for a revised final decoded again in one pass. Per
	// session, not configuration; off, nothing is copied.
	Segments bool `yaml:"-"`
}

// Bounds of LiveConfig fields.
const (
	MaxLiveChannels = 8
	minPartialEvery = 20 * time.Millisecond
	maxPartialEvery = 500 * time.Millisecond
	maxDecoderWait  = time.Minute
)

// DefaultSpeechThreshold is LiveConfig.SpeechThreshold when none is given.
const DefaultSpeechThreshold = 0.6

// SetDefaults fills zero fields with their defaults.
func (c *LiveConfig) SetDefaults() {
	if c.Channels == 0 {
		c.Channels = 1
	}
	if c.SpeechThreshold == nil {
		t := DefaultSpeechThreshold
		c.SpeechThreshold = &t
	}
	if c.PartialInterval == 0 {
		c.PartialInterval = 250 * time.Millisecond
	}
	if c.DecoderWait == 0 {
		c.DecoderWait = 3 * time.Second
	}
}

// Validate reports every out-of-range field, each naming its key. It does
// not know the engine; NewLive checks Language.
func (c LiveConfig) Validate() error {
	var errs []error
	if c.Channels < 1 || c.Channels > MaxLiveChannels {
		errs = append(errs, fmt.Errorf("recognizer: live channels: %d not in 1..%d", c.Channels, MaxLiveChannels))
	}
	if err := c.Endpointing.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("recognizer: live: %w", err))
	}
	if t := c.SpeechThreshold; t != nil && (*t < 0 || *t > 1 || math.IsNaN(*t)) {
		errs = append(errs, fmt.Errorf("recognizer: live speech_threshold: %v not in 0..1", *t))
	}
	if c.PartialInterval < minPartialEvery || c.PartialInterval > maxPartialEvery {
		errs = append(errs, fmt.Errorf("recognizer: live partial_interval: %v not in %v..%v", c.PartialInterval, minPartialEvery, maxPartialEvery))
	}
	if c.DecoderWait < time.Millisecond || c.DecoderWait > maxDecoderWait {
		errs = append(errs, fmt.Errorf("recognizer: live decoder_wait: %v not in 1ms..%v", c.DecoderWait, maxDecoderWait))
	}
	return errors.Join(errs...)
}

// EventKind says what an Event reports.
type EventKind int

// Event kinds, in the order they happen to one utterance (partials and
// the final carry the same ID).
const (
	EventSpeechStart EventKind = iota + 1
	EventSpeechEnd
	EventPartial
	EventFinal
	EventError
	// EventSegment reports a decoder segment that ended after giving
	// finals (LiveConfig.Segments): after its last final.
	EventSegment
)

// String returns the kind's protocol name: speech_start, speech_end,
// partial, final, error or segment.
func (k EventKind) String() string {
	switch k {
	case EventSpeechStart:
		return "speech_start"
	case EventSpeechEnd:
		return "speech_end"
	case EventPartial:
		return "partial"
	case EventFinal:
		return "final"
	case EventError:
		return "error"
	case EventSegment:
		return "segment"
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// Event is one thing Live reports about a channel. All times are seconds
// of session audio (from the first sample written to the Live).
type Event struct {
	Kind    EventKind
	Channel int
	// Time is, for speech_start, where speech began (the first frame of
	// the run that opened it); for speech_end, where the last speech
	// frame ended (before the Endpointing silence); for partial, final
	// and error, the audio position when the event was emitted.
	Time float64
	// Utterance is set for partial and final. A final has the words with
	// times and confidences. A partial has the decoder's current text,
	// Start at the utterance's speech start and End at Time; its Words
	// are the engine's partial words when it reports them (sphinx does
	// not: Words is then empty and Confidence 0). Channel and Language
	// are set.
	Utterance Utterance
	// ID numbers the utterances of the session (all channels) from 0 in
	// the order of their first partial or final; the partials and the
	// final of one utterance share it. Utterances that produce nothing
	// (no words) take no ID.
	ID int
	// Err is set for EventError: ErrAtCapacity when no decoder became
	// free within DecoderWait (that utterance is not transcribed), or a
	// decoder failure.
	Err error
	// Segment is set for EventSegment.
	Segment *LiveSegment
}

// LiveSegment is a decoder segment that ended (EventSegment): the audio the
// live decoder had for it and the finals it gave.
type LiveSegment struct {
	// Start is where Audio starts, in seconds of session audio.
	Start float64
	// Audio is the segment's 16 kHz samples (pre-roll and the pauses
	// inside it included); a copy the receiver owns.
	Audio []int16
	// IDs are the IDs of the segment's finals, in the order emitted.
	IDs []int
}
