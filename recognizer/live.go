package recognizer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/earshot-dev/earshot/recognizer/speexdsp"
)

// LiveConfig configures one live session's recognition (all channels).
// The zero value plus SetDefaults is the contract's default session.
type LiveConfig struct {
	// Channels is the number of audio channels, 1..8. Default 1.
	Channels int `yaml:"channels"`
	// Language is the language code to decode; "" means the engine's
	// first language.
	Language string `yaml:"language"`
	// Endpointing is the silence that ends an utterance, 10ms..10s.
	// Default 50ms. The VAD decides in 10 ms frames, so it is rounded up
	// to a multiple of 10 ms.
	Endpointing time.Duration `yaml:"endpointing"`
	// MaxWithoutEndpointing cuts an utterance (a final is emitted and a
	// new utterance begins at once, without speech events) when it has
	// run this long without an endpoint, 5s..60s. Default 5s. In the
	// last 1.5 s before the limit a pause of 30 ms is enough to end the
	// utterance, so the cut rarely falls inside a word.
	MaxWithoutEndpointing time.Duration `yaml:"max_without_endpointing"`
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
	// which then doubles the CPU). Better accuracy where the incremental
	// decode's running normalisation starts far off — narrowband (8 kHz)
	// audio with a wideband model — at the cost of latency: the whole
	// utterance is decoded after its end. The daemon sets it for sessions
	// below 16 kHz.
	OnePassFinals bool `yaml:"one_pass_finals"`
	// PartialInterval is the cadence of partials, in audio time, during
	// speech, 20ms..500ms. Default 250ms.
	PartialInterval time.Duration `yaml:"partial_interval"`
	// DecoderWait is how long Write waits for a free decoder when speech
	// starts, 1ms..60s; after that the utterance gets an EventError
	// wrapping ErrAtCapacity (its speech events still come). Default 3s.
	DecoderWait time.Duration `yaml:"decoder_wait"`
	// Detect asks the engine to detect the language of each utterance
	// (an engine that can takes an empty StreamOptions.Language as
	// "detect"): Language must be "". Per session, not configuration.
	Detect bool `yaml:"-"`
	// Vocabulary and Prompt are passed to every stream (StreamOptions):
	// a session's custom vocabulary. Per session, not configuration.
	Vocabulary []VocabularyWord `yaml:"-"`
	Prompt     string           `yaml:"-"`
}

// Bounds of LiveConfig fields.
const (
	MaxLiveChannels = 8
	minEndpointing  = 10 * time.Millisecond
	maxEndpointing  = 10 * time.Second
	minMaxUtterance = 5 * time.Second
	maxMaxUtterance = 60 * time.Second
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
	if c.Endpointing == 0 {
		c.Endpointing = 50 * time.Millisecond
	}
	if c.MaxWithoutEndpointing == 0 {
		c.MaxWithoutEndpointing = 5 * time.Second
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
	if c.Endpointing < minEndpointing || c.Endpointing > maxEndpointing {
		errs = append(errs, fmt.Errorf("recognizer: live endpointing: %v not in %v..%v", c.Endpointing, minEndpointing, maxEndpointing))
	}
	if c.MaxWithoutEndpointing < minMaxUtterance || c.MaxWithoutEndpointing > maxMaxUtterance {
		errs = append(errs, fmt.Errorf("recognizer: live max_without_endpointing: %v not in %v..%v", c.MaxWithoutEndpointing, minMaxUtterance, maxMaxUtterance))
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
)

// String returns the kind's protocol name: speech_start, speech_end,
// partial, final or error.
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
}

// Live tuning that is not configuration.
const (
	// livePreRoll is the audio before a speech start that is fed to the
	// decoder too, so the first phoneme is not cut (the start decision
	// needs 50 ms of speech and onsets are soft).
	livePreRoll = 300 * time.Millisecond
	// liveSoftWindow and liveSoftPause: within liveSoftWindow of
	// MaxWithoutEndpointing, a pause of liveSoftPause ends the utterance.
	liveSoftWindow = 1500 * time.Millisecond
	liveSoftPause  = 30 * time.Millisecond
	// liveHangover is the silence after an utterance's endpoint that is
	// still decoded with it (the final comes that much later), unless
	// sound comes back first: a batch segment ends in silence too (its
	// padding), and without it the decoder has to end the utterance on
	// its last phone, which costs words at every cut. With the default
	// 50 ms endpointing utterances are short and there are many cuts.
	// Incremental finals only (see NewLive).
	liveHangover = 200 * time.Millisecond
	// liveCMNHistory is how much of a channel's recent utterance audio
	// normalises the next utterance (cmnPrimer), and liveCMNWarm how much
	// audio the channel must have produced before an incremental decode
	// starts: the first utterance of a channel waits (buffered) until it
	// has that much, so its normalisation comes from its own voice.
	liveCMNHistory = 10 * time.Second
	liveCMNWarm    = 1500 * time.Millisecond
)

// Live runs VAD/endpointing and decoding for every channel of one
// session. Not safe for concurrent use: one owner goroutine calls Write,
// Flush and Close; emit is called synchronously from Write and Flush, in
// order, and must not call back into the Live. Live starts no goroutines.
//
// Memory per channel is bounded: a 380 ms pre-roll ring, one partial frame
// and, while speech is active, one decoder stream checked out of the
// engine (returned after the utterance's final).
type Live struct {
	e    Engine
	cfg  LiveConfig
	emit func(Event)
	lang string

	channels []*liveChannel
	frame    []int16 // scratch: one frame being analysed
	written  int64   // samples written per channel
	nextID   int
	closed   bool

	// Config in samples.
	endpoint, maxUtt, softFrom, softPause, partialEvery, preRoll, histLen, warmLen, hangover int64
}

// liveChannel is one channel's VAD and utterance state.
type liveChannel struct {
	index   int
	vad     liveVAD
	enh     *speexdsp.Preprocessor // nil without AudioEnhancer
	pending []int16                // < liveFrameLen samples not yet framed
	pos     int64                  // samples consumed into frames
	ring    []int16                // recent audio while idle (pre-roll), at most cap

	active      bool    // inside an utterance
	ending      bool    // past the utterance's endpoint, in its hangover
	st          Stream  // nil when idle or when no decoder could be had
	uttStart    int64   // session sample at which st's current utterance audio starts
	speechStart int64   // session sample where the utterance's speech began
	speechEnd   int64   // end of the last speech frame
	silence     int64   // non-speech samples since speechEnd
	nextPartial int64   // audio position at which the next partial is due
	id          int     // utterance ID, -1 until its first partial or final
	utt         []int16 // the current utterance's audio from uttStart (bounded by MaxWithoutEndpointing)
	hist        []int16 // the channel's recent utterance audio, at most liveCMNHistory, oldest first
	prime       []int16 // scratch: hist and utt joined for cmnPrimer
	errored     bool    // a decoder shortage was reported for the current utterance
}

// oneShot is implemented by streams that can decode a whole utterance in
// one pass (sphinx). With OnePassFinals, finals come from it: it normalises
// the utterance's features over the whole utterance, as batch decoding
// does, where an incremental decode has to start from a running mean —
// which on short utterances and on narrowband (8 kHz) audio costs a great
// deal of accuracy — and, without partials, the decoder is held only while
// the final is decoded. Wideband sessions decode incrementally instead and
// take the final from that decode: lower latency, as the whole utterance
// is not decoded again after its end.
type oneShot interface {
	Decode(pcm []int16) (Utterance, error)
}

// NewLive prepares recognition of one session on e. It checks cfg (after
// SetDefaults on a copy) and the language against e.Languages (an error
// wrapping ErrLanguage), and creates the enhancers when AudioEnhancer is
// set. It checks out no decoder: that happens at each speech start.
func NewLive(e Engine, cfg LiveConfig, emit func(Event)) (*Live, error) {
	if e == nil || emit == nil {
		return nil, errors.New("recognizer: live: nil engine or emit")
	}
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	langs := e.Languages()
	lang := cfg.Language
	switch {
	case cfg.Detect && lang != "":
		return nil, fmt.Errorf("recognizer: live: Detect with Language %q", lang)
	case cfg.Detect:
	case lang == "" && len(langs) > 0:
		lang = langs[0]
		fallthrough
	default:
		if !slices.Contains(langs, lang) {
			return nil, fmt.Errorf("recognizer: live in %q (installed: %v): %w", lang, langs, ErrLanguage)
		}
	}
	samples := func(d time.Duration) int64 { return int64(d) * SampleRate / int64(time.Second) }
	l := &Live{
		e:            e,
		cfg:          cfg,
		emit:         emit,
		lang:         lang,
		frame:        make([]int16, liveFrameLen),
		endpoint:     samples(cfg.Endpointing),
		maxUtt:       samples(cfg.MaxWithoutEndpointing),
		softFrom:     samples(cfg.MaxWithoutEndpointing - liveSoftWindow),
		softPause:    samples(liveSoftPause),
		partialEvery: samples(cfg.PartialInterval),
		preRoll:      samples(livePreRoll),
		histLen:      samples(liveCMNHistory),
		warmLen:      samples(liveCMNWarm),
		hangover:     samples(liveHangover),
	}
	if cfg.OnePassFinals {
		// A one-pass final normalises over the utterance itself, which
		// trailing silence would shift: measured on shared/corpus at
		// 8 kHz, 63.60% WER with the hangover against 62.72% without.
		l.hangover = 0
	}
	ringCap := int(l.preRoll) + liveStartWindow*liveFrameLen
	for i := range cfg.Channels {
		ch := &liveChannel{
			index:   i,
			vad:     newLiveVAD(*cfg.SpeechThreshold),
			pending: make([]int16, 0, liveFrameLen),
			ring:    make([]int16, 0, ringCap),
			id:      -1,
		}
		if cfg.AudioEnhancer {
			var ec speexdsp.Config
			ec.SetDefaults()
			p, err := speexdsp.New(liveFrameLen, SampleRate, ec)
			if err != nil {
				l.Close()
				return nil, fmt.Errorf("recognizer: live enhancer: %w", err)
			}
			ch.enh = p
		}
		l.channels = append(l.channels, ch)
	}
	return l, nil
}

// Write takes the next samples of every channel (16 kHz, len(pcm) ==
// Channels, equal lengths). It runs the VAD in 10 ms frames and feeds a
// decoder stream while speech is active. A decoder is checked out from the
// engine at speech start (waiting at most DecoderWait) and released after
// the utterance's final. The pre-roll (up to 300 ms before the speech
// start) is fed too. Frames are processed in time order across channels.
//
// Write returns an error for malformed input, after Close (ErrClosed), and
// when ctx ends while it waits for a decoder; decoder shortages and
// failures are reported as EventError and the session goes on.
func (l *Live) Write(ctx context.Context, pcm [][]int16) error {
	if l.closed {
		return fmt.Errorf("recognizer: live write: %w", ErrClosed)
	}
	if len(pcm) != len(l.channels) {
		return fmt.Errorf("recognizer: live write: %d channels, want %d", len(pcm), len(l.channels))
	}
	n := len(pcm[0])
	for i, c := range pcm {
		if len(c) != n {
			return fmt.Errorf("recognizer: live write: channel %d has %d samples, channel 0 %d", i, len(c), n)
		}
	}
	l.written += int64(n)
	// Every channel has the same number of pending samples.
	used := 0
	for len(l.channels[0].pending)+(n-used) >= liveFrameLen {
		take := liveFrameLen - len(l.channels[0].pending)
		for i, ch := range l.channels {
			copy(l.frame, ch.pending)
			copy(l.frame[len(ch.pending):], pcm[i][used:used+take])
			ch.pending = ch.pending[:0]
			if err := l.frameIn(ctx, ch, l.frame); err != nil {
				return err
			}
		}
		used += take
	}
	for i, ch := range l.channels {
		ch.pending = append(ch.pending, pcm[i][used:]...)
	}
	return nil
}

// frameIn runs one frame of one channel through the enhancer, the VAD and
// the utterance state machine. frame may be modified.
func (l *Live) frameIn(ctx context.Context, ch *liveChannel, frame []int16) error {
	if ch.enh != nil {
		ch.enh.Process(frame)
	}
	t1 := ch.pos + int64(len(frame))
	ch.pos = t1
	speech, started, back := ch.vad.frame(frame, ch.active && !ch.ending)
	if ch.ending {
		// After the endpoint: the silence goes on to the decoder, so the
		// utterance's last sounds end in silence as in a batch segment,
		// until liveHangover has passed or sound comes back.
		if !speech {
			ch.pushRing(frame)
			l.feed(ch, frame, t1)
			if ch.silence += int64(len(frame)); ch.silence < l.endpoint+l.hangover {
				return nil
			}
			return l.close(ctx, ch, t1)
		}
		if err := l.close(ctx, ch, t1-int64(len(frame))); err != nil {
			return err
		}
	}
	if !ch.active {
		ch.pushRing(frame)
		if started {
			return l.begin(ctx, ch, max(0, t1-int64(back+1)*liveFrameLen), t1)
		}
		return nil
	}
	l.feed(ch, frame, t1)
	if err := l.warm(ctx, ch, t1); err != nil {
		return err
	}
	if speech {
		ch.silence, ch.speechEnd = 0, t1
	} else {
		ch.silence += int64(len(frame))
	}
	length := t1 - ch.uttStart
	switch {
	case ch.silence >= l.endpoint:
		l.emit(Event{Kind: EventSpeechEnd, Channel: ch.index, Time: seconds64(ch.speechEnd)})
		if l.hangover > 0 {
			ch.ending = true
			ch.ring = ch.ring[:0]
			return nil
		}
		return l.close(ctx, ch, t1)
	case length >= l.maxUtt || length >= l.softFrom && ch.silence >= l.softPause:
		return l.cut(ctx, ch, t1)
	case l.cfg.Partials && t1 >= ch.nextPartial:
		l.partial(ch, t1)
	}
	return nil
}

// pushRing appends frame to the pre-roll ring, dropping its oldest audio.
func (ch *liveChannel) pushRing(frame []int16) {
	if over := len(ch.ring) + len(frame) - cap(ch.ring); over > 0 {
		n := copy(ch.ring, ch.ring[over:])
		ch.ring = ch.ring[:n]
	}
	ch.ring = append(ch.ring, frame...)
}

// begin opens an utterance whose speech started at sample start; the
// channel has consumed audio up to t1, the tail of which is in the ring.
func (l *Live) begin(ctx context.Context, ch *liveChannel, start, t1 int64) error {
	ch.active = true
	ch.speechStart, ch.speechEnd, ch.silence = start, t1, 0
	ch.nextPartial = start + l.partialEvery
	ch.id = -1
	ch.uttStart = max(start-l.preRoll, t1-int64(len(ch.ring)))
	pre := ch.ring[len(ch.ring)-int(t1-ch.uttStart):]
	defer func() { ch.ring = ch.ring[:0] }()
	l.emit(Event{Kind: EventSpeechStart, Channel: ch.index, Time: seconds64(start)})
	ch.utt = ch.utt[:0]
	ch.errored = false
	l.feed(ch, pre, t1)
	return l.warm(ctx, ch, t1)
}

// incremental reports whether utterances are decoded as they arrive (the
// decoder held from speech start) rather than in one pass at their end.
func (l *Live) incremental() bool { return l.cfg.Partials || !l.cfg.OnePassFinals }

// checkout gets the channel a decoder, waiting at most DecoderWait; when
// none comes it reports an error event and leaves ch.st nil.
func (l *Live) checkout(ctx context.Context, ch *liveChannel, start, t1 int64) error {
	wctx, cancel := context.WithTimeout(ctx, l.cfg.DecoderWait)
	st, err := l.e.NewStream(wctx, StreamOptions{Language: l.lang, Vocabulary: l.cfg.Vocabulary, Prompt: l.cfg.Prompt})
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("recognizer: live channel %d: wait for decoder: %w", ch.index, context.Cause(ctx))
		}
		if !ch.errored {
			ch.errored = true
			l.fail(ch, t1, fmt.Errorf("recognizer: live channel %d at %.2fs: %w", ch.index, seconds64(start), err))
		}
		return nil
	}
	ch.st = st
	l.primeCMN(ch)
	return nil
}

// feed appends audio to the utterance and writes it to the channel's
// stream when it decodes incrementally.
func (l *Live) feed(ch *liveChannel, pcm []int16, t1 int64) {
	ch.utt = append(ch.utt, pcm...)
	if ch.st == nil || !l.incremental() {
		return
	}
	l.write(ch, pcm, t1)
}

// write writes audio to the channel's stream; a failure is reported and
// the rest of the utterance goes undecoded.
func (l *Live) write(ch *liveChannel, pcm []int16, t1 int64) {
	if err := ch.st.Write(pcm); err != nil {
		ch.st.Close()
		ch.st = nil
		l.fail(ch, t1, fmt.Errorf("recognizer: live channel %d at %.2fs: decode: %w", ch.index, seconds64(t1), err))
	}
}

// end closes the utterance: speech_end, then its final, then the decoder
// goes back to the pool.
func (l *Live) end(ctx context.Context, ch *liveChannel, t1 int64) error {
	if !ch.ending {
		l.emit(Event{Kind: EventSpeechEnd, Channel: ch.index, Time: seconds64(ch.speechEnd)})
	}
	return l.close(ctx, ch, t1)
}

// close emits the ended utterance's final and returns its decoder.
func (l *Live) close(ctx context.Context, ch *liveChannel, t1 int64) error {
	err := l.final(ctx, ch, t1)
	if ch.st != nil {
		ch.st.Close()
		ch.st = nil
	}
	ch.active, ch.ending = false, false
	ch.vad.clearStart()
	return err
}

// cut ends the utterance without an endpoint (MaxWithoutEndpointing): its
// final is emitted and the next utterance starts at t1 on the same stream.
func (l *Live) cut(ctx context.Context, ch *liveChannel, t1 int64) error {
	err := l.final(ctx, ch, t1)
	ch.uttStart, ch.speechStart = t1, t1
	ch.nextPartial = t1 + l.partialEvery
	if ch.st != nil {
		l.primeCMN(ch) // the stream goes on: normalise by the audio so far
	}
	return err
}

// final finishes the stream's utterance and emits it unless it has no
// words.
func (l *Live) final(ctx context.Context, ch *liveChannel, t1 int64) error {
	defer func() {
		l.remember(ch)
		ch.id = -1
		ch.utt = ch.utt[:0]
		if !l.incremental() && ch.st != nil {
			ch.st.Close() // held only while the final was decoded
			ch.st = nil
		}
	}()
	if len(ch.utt) == 0 || ch.errored {
		return nil // nothing said, or no decoder came for it (reported)
	}
	fresh := ch.st == nil // the utterance has not been written to a stream
	if fresh {
		if err := l.checkout(ctx, ch, ch.speechStart, t1); err != nil || ch.st == nil {
			return err
		}
	}
	var u Utterance
	var err error
	if o, ok := ch.st.(oneShot); ok && l.cfg.OnePassFinals {
		u, err = o.Decode(ch.utt)
	} else {
		if fresh {
			err = ch.st.Write(ch.utt)
		}
		if err == nil {
			u, err = ch.st.Finish()
		}
	}
	if err != nil {
		ch.st.Close()
		ch.st = nil
		l.fail(ch, t1, fmt.Errorf("recognizer: live channel %d at %.2fs: finish: %w", ch.index, seconds64(t1), err))
		return nil
	}
	if len(u.Words) == 0 {
		return nil
	}
	off := seconds64(ch.uttStart)
	u.Start += off
	u.End += off
	for i := range u.Words {
		u.Words[i].Start += off
		u.Words[i].End += off
	}
	u.Channel = ch.index
	if u.Language == "" {
		u.Language = l.lang
	}
	l.emit(Event{Kind: EventFinal, Channel: ch.index, Time: seconds64(t1), Utterance: u, ID: l.utteranceID(ch)})
	return nil
}

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
		ch.id = l.nextID
		l.nextID++
	}
	return ch.id
}

// Flush ends every open utterance now, emitting its speech_end and final
// (e.g. on stop_recording). Samples short of a whole 10 ms frame stay
// pending and are not decoded. The Live may be written again afterwards.
// ctx bounds the wait for a decoder to decode the finals.
func (l *Live) Flush(ctx context.Context) error {
	if l.closed {
		return fmt.Errorf("recognizer: live flush: %w", ErrClosed)
	}
	for _, ch := range l.channels {
		if ch.active {
			if err := l.end(ctx, ch, ch.pos); err != nil {
				return err
			}
		}
	}
	return nil
}

// Duration is the seconds of audio written per channel so far.
func (l *Live) Duration() float64 { return seconds64(l.written) }

// Close releases the decoders and enhancers without emitting anything;
// open utterances are discarded. Idempotent; returns nil.
func (l *Live) Close() error {
	if l.closed {
		return nil
	}
	l.closed = true
	for _, ch := range l.channels {
		if ch.st != nil {
			ch.st.Close()
			ch.st = nil
		}
		if ch.enh != nil {
			ch.enh.Close()
			ch.enh = nil
		}
		ch.active = false
	}
	return nil
}

func seconds64(samples int64) float64 { return float64(samples) / SampleRate }
