package recognizer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/earshot-dev/earshot/recognizer/speexdsp"
)

// Live tuning that is not configuration.
const (
	// livePreRoll is the audio before a speech start that is fed to the
	// decoder too, so the first phoneme is not cut (the start decision
	// needs 50 ms of speech and onsets are soft).
	livePreRoll = 300 * time.Millisecond
	// liveSoftWindow and liveSoftPause: within liveSoftWindow of
	// Endpointing.MaxUtterance, a pause of liveSoftPause ends the utterance.
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
	// liveSegmentPause and liveSegmentMax bound a decoder segment (see
	// live_segment.go): the decoder goes on through pauses shorter than
	// liveSegmentPause, for at most liveSegmentMax of audio
	// (VADConfig.MaxSegment), so each utterance is decoded with the words
	// before it; a segment's end gives the finals still due the best path
	// through its lattice. 450 ms: against 1500 ms with every final read
	// from the path, live finals' WER on the corpus tuning set fell at
	// 16 kHz (40.59 -> 39.52 %) and for both G.711 laws (mu-law 44.80 ->
	// 43.23, A-law 42.77 -> 42.36); 250 ms was as good at 16 kHz and worse
	// for A-law (docs/live-tuning.md, 2026-11-25 01:34 UTC).
	liveSegmentPause = 450 * time.Millisecond
	liveSegmentMax   = 20 * time.Second
	// liveFinalLookahead is how much more audio the segment's decoder has
	// after an utterance's final is due (its endpoint and hangover) before
	// the final is read from the segment's path: the first pass's path
	// still changes its last words for a while as audio comes (the next
	// words' context), so reading it a little later costs latency and no
	// CPU. Segmented finals only (live_segment.go); a segment's end
	// (liveSegmentPause, sooner) emits what is pending at once. 400 ms: on
	// the corpus better than 250 ms at 16 kHz and for both G.711 laws, and
	// 550 ms no better again
	// (docs/live-tuning.md, 2026-11-24 22:33 UTC).
	liveFinalLookahead = 400 * time.Millisecond
	// livePathStall is how much longer than the endpoint and hangover the
	// segment's path must have had no new word, while the VAD still holds
	// speech, for the utterance's final to be due (pathEnded): the path is
	// read every 200 ms (the decoder's blocks), so the final is still due
	// before its lookahead ends (endpoint + hangover + lookahead past the
	// last word, 650 ms by default) and comes as soon, with fewer cuts in
	// pauses inside phrases that the VAD does not end. On the corpus tuning
	// set mu-law finals' WER was 45.01 % with 200 ms, 45.43 % with 0 ms and
	// 45.11 % without path-ended finals; 41.43 % at 16 kHz in all three
	// (bench/CALLS.md, 2026-11-29).
	livePathStall = 200 * time.Millisecond
	// liveCutGuard: at a cut without an endpoint (Endpointing.MaxUtterance)
	// the words ending in its last liveCutGuard are left to the next final,
	// as the first pass may still change them.
	liveCutGuard = 100 * time.Millisecond
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
	load     liveLoad // decode speed and the lean search (live_load.go)

	// Config in samples.
	endpoint, maxUtt, softFrom, softPause, partialEvery, preRoll, histLen, warmLen, hangover int64
	segPause, segMax, cutGuard, lookahead, pathStall                                         int64
}

// liveChannel is one channel's VAD and utterance state.
type liveChannel struct {
	index   int
	vad     liveVAD
	enh     *speexdsp.Preprocessor // nil without AudioEnhancer
	pending []int16                // < liveFrameLen samples not yet framed
	pos     int64                  // samples consumed into frames
	ring    []int16                // recent audio while idle (pre-roll), at most cap

	active      bool       // inside an utterance
	ending      bool       // past the utterance's endpoint, in its hangover
	st          Stream     // nil when idle or when no decoder could be had
	uttStart    int64      // session sample at which st's current utterance audio starts (the segment's, see live_segment.go)
	idleCut     int64      // digital silence left out of the pre-roll before uttStart (begin; MaxUtterance counts it)
	seg         bool       // a decoder segment is open past its last final (live_segment.go)
	cutAt       int64      // the segment's words with their middle before this sample were emitted (or are due)
	due         []dueFinal // finals of the segment waiting for their lookahead, oldest first
	segIDs      []int      // IDs of the segment's finals emitted so far (LiveConfig.Segments)
	wordsEnd    float64    // end of the last word emitted, session seconds
	speechStart int64      // session sample where the utterance's speech began
	speechEnd   int64      // end of the last speech frame
	silence     int64      // non-speech samples since speechEnd
	nextPartial int64      // audio position at which the next partial is due
	id          int        // utterance ID, -1 until its first partial or final
	utt         []int16    // the stream's audio from uttStart (bounded by liveSegmentMax + liveSegmentPause)
	hist        []int16    // the channel's recent utterance audio, at most liveCMNHistory, oldest first
	prime       []int16    // scratch: hist and utt joined for cmnPrimer
	errored     bool       // a decoder shortage was reported for the current utterance
	boxed       bool       // st's segment is counted by LiveConfig.BoxLoad (release)
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
		endpoint:     samples(cfg.Endpointing.Silence.D()),
		maxUtt:       samples(cfg.Endpointing.MaxUtterance.D()),
		softFrom:     samples(cfg.Endpointing.MaxUtterance.D() - liveSoftWindow),
		softPause:    samples(liveSoftPause),
		partialEvery: samples(cfg.PartialInterval),
		preRoll:      samples(livePreRoll),
		histLen:      samples(liveCMNHistory),
		warmLen:      samples(liveCMNWarm),
		hangover:     samples(liveHangover),
		segPause:     samples(liveSegmentPause),
		segMax:       samples(liveSegmentMax),
		cutGuard:     samples(liveCutGuard),
		lookahead:    samples(liveFinalLookahead),
		pathStall:    samples(cfg.Endpointing.Silence.D() + liveHangover + livePathStall),
		load:         newLiveLoad(cfg.BoxLoad),
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
				return l.hangoverPathEnded(ctx, ch, t1)
			}
			return l.close(ctx, ch, t1)
		}
		if err := l.close(ctx, ch, t1-int64(len(frame))); err != nil {
			return err
		}
	}
	if !ch.active {
		ch.pushRing(frame)
		if ch.seg {
			l.pause(ch, frame, t1, started)
		}
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
	length := t1 - max(ch.uttStart-ch.idleCut, ch.speechStart-l.preRoll) // this utterance's, within a segment
	switch {
	case ch.silence >= l.endpoint:
		l.emit(Event{Kind: EventSpeechEnd, Channel: ch.index, Time: seconds64(ch.speechEnd)})
		if l.hangover > 0 {
			ch.ending = true
			ch.ring = ch.ring[:0]
			return l.hangoverPathEnded(ctx, ch, t1)
		}
		return l.close(ctx, ch, t1)
	case length >= l.maxUtt || length >= l.softFrom && ch.silence >= l.softPause:
		return l.cut(ctx, ch, t1)
	case l.pathEnded(ch, t1):
		// The path's words ended a while ago, the VAD still hears sound:
		// their final is due now, as at a cut (the utterance goes on).
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
	if ch.seg {
		// The segment's decoder has had the pause, pre-roll included.
		ch.seg = false
		ch.ring = ch.ring[:0]
		l.emit(Event{Kind: EventSpeechStart, Channel: ch.index, Time: seconds64(start)})
		return nil
	}
	ch.uttStart = max(start-l.preRoll, t1-int64(len(ch.ring)))
	pre := ch.ring[len(ch.ring)-int(t1-ch.uttStart):]
	// The pre-roll stops at digital silence (the idle code of a call leg
	// whose sender is quiet: a SIPREC leg while the other party talks). Fed
	// to the decoder, its frames' cepstra are the front end's log floor,
	// which the running mean and the first frames' deltas take in: on
	// callbench's SIPREC PCMU calls replayed offline (bench/CALLS.md) the
	// whole legs' live finals were 0.557 WER with them and 0.525 without,
	// as the turns decoded alone. Only the audio before the speech start
	// is looked at: the loud frames from there on are never digital
	// silence, which is at most -72 dBFS (liveFloorMin and liveMargin).
	ch.idleCut = int64(afterIdle(pre[:start-ch.uttStart]))
	pre = pre[ch.idleCut:]
	ch.uttStart += ch.idleCut
	defer func() { ch.ring = ch.ring[:0] }()
	l.emit(Event{Kind: EventSpeechStart, Channel: ch.index, Time: seconds64(start)})
	ch.utt = ch.utt[:0]
	ch.cutAt = ch.uttStart
	ch.errored = false
	l.feed(ch, pre, t1)
	return l.warm(ctx, ch, t1)
}

// incremental reports whether utterances are decoded as they arrive (the
// decoder held from speech start) rather than in one pass at their end.
func (l *Live) incremental() bool { return l.cfg.Partials || !l.cfg.OnePassFinals }

// feed appends audio to the utterance and writes it to the channel's
// stream when it decodes incrementally.
func (l *Live) feed(ch *liveChannel, pcm []int16, t1 int64) {
	ch.utt = append(ch.utt, pcm...)
	if ch.st == nil || !l.incremental() {
		return
	}
	l.write(ch, pcm, t1)
	l.emitDue(ch, t1, false)
}

// write writes audio to the channel's stream; a failure is reported and
// the rest of the utterance goes undecoded.
func (l *Live) write(ch *liveChannel, pcm []int16, t1 int64) {
	start := time.Now()
	err := ch.st.Write(pcm)
	l.load.add(time.Since(start), t1, len(pcm))
	if err != nil {
		l.release(ch)
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
	ch.active, ch.ending = false, false
	ch.vad.clearStart()
	if l.segmented(ch) && t1-ch.uttStart < l.segMax && !l.load.switchDue(ch.st) {
		ch.seg = true // the decoder goes on through the pause
		return err
	}
	l.endSegment(ch)
	return err
}

// cut ends the utterance without an endpoint (Endpointing.MaxUtterance): its
// final is emitted and the next utterance starts at t1 on the same stream.
//
// An incremental utterance with no decoder yet (none was free at its speech
// start, or the channel was not warm) waits for one here, as its final
// would, and the decoder gets the utterance's buffered audio from
// ch.uttStart: the cut then reads it as any segment. (final would check one
// out and write the audio too, but the cut below moves ch.uttStart to t1
// while that stream goes on from the old start, so the next finals' words
// came seconds after their audio.)
func (l *Live) cut(ctx context.Context, ch *liveChannel, t1 int64) error {
	if ch.st == nil && l.incremental() && len(ch.utt) > 0 && !ch.errored {
		if err := l.checkout(ctx, ch, ch.speechStart, t1, true); err != nil {
			return err
		}
		if ch.st != nil {
			l.write(ch, ch.utt, t1)
		}
	}
	if l.segmented(ch) {
		l.pathFinal(ch, t1, t1-l.cutGuard)
		ch.speechStart = t1
		ch.nextPartial = t1 + l.partialEvery
		if t1-ch.uttStart >= l.segMax {
			l.restartSegment(ch, t1)
		}
		return nil
	}
	err := l.final(ctx, ch, t1)
	ch.uttStart, ch.speechStart, ch.idleCut = t1, t1, 0
	ch.nextPartial = t1 + l.partialEvery
	if ch.st != nil {
		l.primeCMN(ch) // the stream goes on: normalise by the audio so far
	}
	return err
}

// final finishes the stream's utterance and emits it unless it has no
// words.
func (l *Live) final(ctx context.Context, ch *liveChannel, t1 int64) error {
	if len(ch.utt) == 0 || ch.errored {
		l.finished(ch)
		return nil // nothing said, or no decoder came for it (reported)
	}
	fresh := ch.st == nil // the utterance has not been written to a stream
	if fresh {
		if err := l.checkout(ctx, ch, ch.speechStart, t1, true); err != nil || ch.st == nil {
			l.finished(ch)
			return err
		}
		if l.segmented(ch) {
			l.write(ch, ch.utt, t1)
		}
	}
	if l.segmented(ch) {
		l.pathFinal(ch, t1, t1) // the segment's decoder goes on
		return nil
	}
	defer l.finished(ch)
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
		l.release(ch)
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

// finished forgets the ended utterance: its audio goes to the channel's
// history, and a decoder held only for its final is returned.
func (l *Live) finished(ch *liveChannel) {
	l.remember(ch)
	ch.id = -1
	ch.utt = ch.utt[:0]
	if !l.incremental() && ch.st != nil {
		l.release(ch) // held only while the final was decoded
	}
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
		if ch.seg {
			l.endSegment(ch)
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
			l.release(ch)
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
