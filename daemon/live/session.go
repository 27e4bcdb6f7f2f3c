package live

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/ingest"
	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/addons/pii"
	"github.com/earshot-dev/earshot/recognizer/pipeline"
	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/transcript"
)

// Session tuning that is not configuration.
const (
	// inboxSize bounds the requests waiting for a session's goroutine
	// (each door's calls wait for their answer, so a door has at most one
	// or two in it at a time).
	inboxSize = 16
	// tickEvery is how often a session checks its timeouts.
	tickEvery = 250 * time.Millisecond
)

type liveState int

const (
	stateWaiting  liveState = iota // created, never connected
	stateAttached                  // a door is attached
	stateDetached                  // the door went away; may reconnect
	stateEnded                     // finalised
)

// session is one live job while it runs. Its goroutine (run) owns every
// field below the first group: doors, timeouts, DELETE and key revocation
// reach it only through inbox, as typed requests (requests.go), and the
// recogniser only through its events channel (recogniser.go). No lock is
// held across an engine call or a store commit: there is none.
type session struct {
	// Set at creation, then read-only (the batch gate reads p too).
	svc     *Service
	id      string
	account string
	keyID   string                 // the API key that created it ("" for SIP); revoking it ends the session
	audit   func(store.AuditEntry) // the audit trail (Signals.Audit)
	p       *params.Live
	format  media.Format
	expires time.Time // the token's expiry
	log     *slog.Logger
	inbox   chan request  // bounded (inboxSize)
	done    chan struct{} // closed by run when the session has ended
	endErr  error         // why it was ended from outside (ErrKeyRevoked); written before done is closed

	connectBy time.Time // ends the session as 408 when no door has attached by then
	opened    bool      // created attached (OpenLive): its job was committed as processing

	state      liveState
	gen        int             // attachment generation
	listener   ingest.Listener // the current client, nil when none
	stopDetach func() bool     // unregisters the current attachment's context watch
	lastSeen   time.Time
	received   int64          // bytes taken in, header included
	header     int64          // WAV header bytes skipped at the start
	framer     *media.Framer  // raw frames to 16 kHz PCM; set by start
	rec        *recording     // the WAV file (recording.go)
	shared     *recordingSync // its copy in a cluster's store (recording_sync.go), nil on one box
	recog      *recogniser    // nil until start
	backlog    [][]int16      // 16 kHz audio not yet handed to the recogniser, per channel
	finals     []recognizer.Utterance
	finalIDs   []int               // the utterance ID of each of finals, -1 for a revision's (revise.go)
	rev        *reviser            // decodes ended segments again (revise.go), nil unless the session asked
	messages   *messageLog         // what result.messages keeps (messages.go)
	pending    []*store.Delivery   // callback deliveries not committed yet (flushDeliveries)
	heldTried  time.Time           // the last flush the store could not take (outage.go); zero when it took it
	stopped    bool                // stop_recording came
	resync     bool                // a reconnected client may resend acked bytes
	cursor     int64               // client offset inside the resent overlap, -1 unknown
	recErr     error               // the recogniser failed: the next Write returns it
	started    time.Time           // first attachment
	addons     *liveAddons         // realtime add-ons, nil until used (addons.go)
	busy       time.Duration       // time spent in the recogniser (result.metadata.transcription_time)
	paused     bool                // audio is stored and recognised as silence (pause.go)
	spans      []ingest.PausedSpan // the paused spans, the open one's End -1; at most maxPausedSpans
	quiet      []byte              // the silence written for paused audio, reused
	keys       keyState            // the DTMF keys (dtmf.go)
	inband     *inband             // in-band DTMF detection (inband.go), nil when off
	route      *pipeline.LiveRoute // the engine the recogniser runs on (set at start), nil before
	batchPass  bool                // a batch pass follows the end (batchpass.go)
	pii        *pii.Stream         // redacts the finals and partials (redact.go), nil without pii_redaction
	unredacted bool                // the recording could not be blanked: the failed session drops it
	recWG      sync.WaitGroup      // the recogniser goroutine

	// lean of segments decoder segments started on the lean search
	// because the box was short of CPU (recognizer.Live.LeanSegments).
	lean, segments int
}

// newSession prepares a session and its recording file; the caller starts
// its goroutine (Service.start).
func (s *Service) newSession(job *store.Job, p *params.Live, connectBy time.Time) (*session, error) {
	sess := &session{
		svc: s, id: job.ID, account: job.Account, keyID: job.KeyID, audit: s.deps.Signals.Audit, p: p, format: liveFormat(p),
		expires:  job.CreatedAt.Add(s.cfg.TokenTTL),
		log:      s.log.With("component", "live", "session_id", job.ID),
		inbox:    make(chan request, inboxSize),
		done:     make(chan struct{}),
		messages: newMessageLog(s.cfg.MaxStoredMessageBytes), connectBy: connectBy,
		opened: job.Status == store.StatusProcessing,
		pii:    newPIIStream(p),
	}
	if p.PCI.StartPaused {
		sess.paused, sess.spans = true, []ingest.PausedSpan{{Start: 0, End: -1}}
	}
	path, err := s.deps.Recordings.RecordingPath(job.Blob)
	if err != nil {
		return nil, err
	}
	if sess.rec, err = createRecording(s.deps.Recordings, path, sess.format); err != nil {
		return nil, err
	}
	sess.shared = s.newRecordingSync(job.Blob, path, sess.log)
	return sess, nil
}

func liveFormat(p *params.Live) media.Format {
	f := media.Format{Encoding: media.LinearPCM, BitDepth: p.BitDepth, SampleRate: p.SampleRate, Channels: p.Channels}
	switch p.Encoding {
	case params.EncodingALaw:
		f.Encoding, f.BitDepth = media.ALaw, 8
	case params.EncodingULaw:
		f.Encoding, f.BitDepth = media.MuLaw, 8
	}
	return f
}

// run is the session's goroutine: it takes requests, recogniser events
// and finished translations, feeds the recogniser, checks the timeouts,
// and commits the callback deliveries each step queued, until the session
// has ended. A panic ends the session without a result (the restart
// recovers it from its recording).
func (s *session) run() {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("live session panicked", "panic", r, "stack", string(debug.Stack()))
			if s.state != stateEnded {
				s.state = stateEnded
				s.svc.drop(s.id)
			}
			if r := s.recog; r != nil {
				if !r.closed {
					close(r.in)
					r.closed = true
				}
				for range r.events { // until the recogniser has exited
				}
				s.recWG.Wait()
			}
			s.rev.stop()
		}
		if s.stopDetach != nil {
			s.stopDetach()
		}
		s.shared.halt()
		close(s.done)
	}()
	if s.shared != nil {
		go s.shared.run() // halted by finish, or above
	}
	tick := time.NewTicker(tickEvery)
	defer tick.Stop()
	for s.state != stateEnded {
		select {
		case r := <-s.inbox:
			r.handle(s)
		case e, ok := <-s.recogniserEvents():
			s.onRecogniser(e, ok)
		case s.feed() <- s.backlog:
			s.backlog = nil
		case <-s.addonsReady():
			s.pumpAddons()
		case rv := <-s.revisionsReady():
			s.onRevision(rv)
		case now := <-tick.C:
			s.expire(now, false)
		case <-s.svc.stop:
			s.expire(time.Now(), true)
		}
		s.flushDeliveries()
	}
}

// attach connects a door to the session (l nil: an audio-only door); the
// attachment lasts while ctx does.
func (s *session) attach(ctx context.Context, l ingest.Listener) (ingest.Session, error) {
	reply := make(chan attachReply, 1)
	if err := s.call(ctx, attachReq{l: l, reply: reply}); err != nil {
		return nil, err
	}
	r, err := await(ctx, s, reply)
	if err == nil {
		err = r.err
	}
	if err != nil {
		return nil, err
	}
	a := &attachment{s: s, gen: r.gen, acks: l != nil}
	stop := context.AfterFunc(ctx, func() { s.post(detachReq{gen: a.gen}) })
	if s.call(context.Background(), watchReq{gen: a.gen, stop: stop}) != nil {
		stop() // the session has ended: nothing to watch
	}
	return a, nil
}

// onAttach is attachReq's work.
func (s *session) onAttach(l ingest.Listener) (int, error) {
	if l != nil {
		if s.listener != nil {
			s.listener.Kick() // a newer connection takes over
		}
		s.listener = l
	}
	s.gen++
	s.lastSeen = time.Now()
	// Bytes short of a whole frame were never acked: the client resends them.
	if s.framer != nil {
		s.received -= int64(s.framer.Pending())
		s.framer.Drop()
	}
	// The resend is checked against the stored tail: the in-band filters
	// pass on what they hold first.
	if err := s.drainInband(); err != nil {
		return 0, err
	}
	// A reconnecting client resends from the last ack it saw, which may be
	// behind the last one sent: the first frames are checked against what
	// was taken in, and the overlap is dropped.
	s.resync = s.received > 0
	s.cursor = -1
	first := s.state == stateWaiting
	s.state = stateAttached
	if first {
		s.started = time.Now()
		if err := s.start(); err != nil {
			return 0, err
		}
	}
	s.log.Info("client attached", "generation", s.gen)
	return s.gen, nil
}

// start marks the job processing (a session opened attached was created
// so) and starts the recogniser.
func (s *session) start() error {
	if !s.opened {
		if _, err := s.svc.db.UpdateJob(s.id, func(j *store.Job) ([]*store.Delivery, error) {
			j.Status = store.StatusProcessing
			return nil, nil
		}); err != nil {
			return err
		}
	}
	cfg := s.svc.recogniserConfig(s.p)
	// A call (8 kHz PCMU/PCMA from the doors, or narrowband WebSocket
	// audio) decodes with the telephone-band model, or searches wider on
	// the wideband one.
	cfg.Narrowband = s.format.SampleRate < recognizer.SampleRate
	cfg.Tenant = s.account // its share of a live pool (live.decoder_share)
	lo := pipeline.LiveOptions{
		Model: s.p.Model, Languages: s.p.LanguageConfig.Languages, CodeSwitching: s.p.LanguageConfig.CodeSwitching,
		Narrowband:  cfg.Narrowband,
		DecoderWait: cfg.DecoderWait,
	}
	if rp := s.p.RealtimeProcessing; rp.CustomVocabulary {
		lo.Vocabulary = rp.CustomVocabularyConfig
	}
	// With in-band DTMF the framer keeps the session's rate: the filters
	// work on it and resample what they pass on (inband.go).
	rate := recognizer.SampleRate
	if s.p.PCI.InbandDTMF && s.p.InbandFormat() {
		var err error
		if s.inband, err = newInband(s.format); err != nil {
			return err
		}
		rate = s.format.SampleRate
	}
	framer, err := media.NewFramer(s.format, rate)
	if err != nil {
		return err
	}
	rg, err := newRecogniser(s.svc.halt, s.svc.pl, lo, cfg, wantsRevisions(s.p))
	if err != nil {
		return err
	}
	if rg.segments {
		s.rev = newReviser(s.svc.halt, rg.route.BatchEngine(), rg.streamOpts, s.svc.gate.cpu, cfg.DecoderWait)
	}
	s.route, s.framer, s.recog = rg.route, framer, rg
	s.recWG.Go(rg.run)
	s.send(msg(typeStartSession, s.id, nil))
	s.send(msg(typeStartRecording, s.id, nil))
	if s.paused {
		s.send(msg(typePaused, s.id, pauseData{Time: s.spans[len(s.spans)-1].Start}))
	}
	return nil
}

// recogniserConfig is the recogniser's configuration for a session's
// options.
func (s *Service) recogniserConfig(p *params.Live) recognizer.LiveConfig {
	// The request's speech_threshold as asked, 0 included (params owns
	// its default).
	threshold := p.PreProcessing.SpeechThreshold
	cfg := recognizer.LiveConfig{
		Channels:        p.Channels,
		Language:        p.Language(),
		Endpointing:     p.Endpointing, // as params decoded and bounded it
		SpeechThreshold: &threshold,
		AudioEnhancer:   p.PreProcessing.AudioEnhancer,
		Partials:        p.MessagesConfig.ReceivePartialTranscripts || p.Callback && p.CallbackConfig.ReceivePartialTranscripts,
		PartialInterval: s.cfg.PartialInterval,
		// Narrowband sessions decode as they arrive too, in segments
		// through short pauses (recognizer/live_segment.go): as accurate
		// as one pass per utterance with the channel's normalisation, at
		// a fraction of its CPU and with no decode after the endpoint
		// (bench/README.md, issue 14).
		DecoderWait: s.cfg.DecoderWait,
		BoxLoad:     s.box,
	}
	cfg.SetDefaults()
	return cfg
}

// current checks that an attachment of generation gen may act.
func (s *session) current(gen int) error {
	if s.gen != gen {
		return ErrTakenOver
	}
	return nil
}

// write takes raw audio in the session's format: it stores whole frames,
// hands their samples to the recogniser and acks them, without waiting
// for the recogniser (unless its backlog is full, recogniser.go).
func (s *session) write(gen int, acks bool, audio []byte) error {
	if err := s.current(gen); err != nil {
		return err
	}
	if len(audio) > s.svc.cfg.MaxFrameBytes {
		return &errcode.Error{Kind: errcode.ErrTooLarge, Msg: fmt.Sprintf("frame of %d bytes > limit %d", len(audio), s.svc.cfg.MaxFrameBytes)}
	}
	s.lastSeen = time.Now()
	if s.recErr != nil {
		return s.recErr
	}
	if s.stopped {
		s.deliver(errorMsg(s.id, typeAudioChunk, "audio after stop_recording is ignored"), acks)
		return nil
	}
	if s.resync {
		dup, from := s.overlap(audio)
		if dup > 0 {
			audio = audio[dup:]
			if len(audio) == 0 {
				s.ackAudio(acks, from, from+int64(dup))
				return nil
			}
		}
	}
	from := s.received
	// The ack starts where the last one ended: a byte held short of a
	// whole frame then was not acked, and this frame completes it.
	ackFrom := from - int64(s.framer.Pending())
	s.received += int64(len(audio))
	if from == 0 && bytes.HasPrefix(audio, []byte("RIFF")) {
		n, err := s.skipHeader(audio)
		if err != nil {
			s.received = from
			s.deliver(errorMsg(s.id, typeAudioChunk, err.Error()), acks)
			return nil
		}
		s.header = n
		audio = audio[n:]
	}
	pcm, whole := s.framer.Push(audio)
	if len(whole) > 0 {
		if s.paused {
			whole = s.silence(whole, pcm)
		}
		whole, pcm = s.inbandPass(whole, pcm)
		if err := s.rec.write(whole); err != nil {
			return err
		}
		s.shared.wrote(media.WAVHeaderSize + s.rec.audio)
		s.queue(pcm)
		s.inbandKeys() // after its frames: a key may pause the session
	}
	s.ackAudio(acks, ackFrom, s.received-int64(s.framer.Pending()))
	return nil
}

// skipHeader parses a WAV header at the very start of the stream.
func (s *session) skipHeader(b []byte) (int64, error) {
	r := bytes.NewReader(b)
	f, _, err := media.ReadWAVHeader(r)
	if err != nil {
		return 0, fmt.Errorf("a WAV header must fit in the first frame: %v", err)
	}
	if f.Channels != s.format.Channels || f.SampleRate != s.format.SampleRate || f.Encoding != s.format.Encoding || f.BitDepth != s.format.BitDepth {
		return 0, fmt.Errorf("WAV header says %v %d bit %d Hz %d channels, the session was opened for %s %d bit %d Hz %d channels",
			f.Encoding, f.BitDepth, f.SampleRate, f.Channels, s.p.Encoding, s.p.BitDepth, s.p.SampleRate, s.p.Channels)
	}
	return int64(len(b) - r.Len()), nil
}

// secondsAt converts a whole-session byte offset to seconds of audio.
func (s *session) secondsAt(off int64) float64 {
	off -= s.header
	if off < 0 {
		off = 0
	}
	return transcript.Round3(float64(off/int64(s.format.FrameSize())) / float64(s.format.SampleRate))
}

// pendingBytes is the number of bytes held short of a whole frame.
func (s *session) pendingBytes() int {
	if s.framer == nil {
		return 0
	}
	return s.framer.Pending()
}

// stop ends the recording: ack, remaining finals, post-processing,
// result, end_session. Later stops are acked and ignored.
func (s *session) stop(ctx context.Context, gen int, acks bool) error {
	if err := s.current(gen); err != nil {
		return err
	}
	s.lastSeen = time.Now()
	dur := s.secondsAt(s.received - int64(s.pendingBytes()))
	if s.stopped || s.wantsAcks(acks) {
		left := 0.0 // the audio the recogniser has not been handed yet
		if len(s.backlog) > 0 {
			left = transcript.Round3(float64(len(s.backlog[0])) / recognizer.SampleRate)
		}
		s.deliver(msg(typeStopRecording, s.id, stopData{RecordingDuration: dur, RecordingLeftToProcess: left}).ack(true, ""), acks)
	}
	if s.stopped {
		return nil // later stops are acked and ignored
	}
	s.stopped = true
	s.finish(ctx, "")
	return nil
}

// detach records that the attachment of generation gen went away; the
// session waits for a reconnect until the grace period ends.
func (s *session) detach(gen int) {
	if s.gen != gen || s.state != stateAttached {
		return
	}
	s.state = stateDetached
	s.listener = nil
	s.lastSeen = time.Now()
	s.log.Info("client detached")
}

// expire is the timeouts' check; shutdown finalises whatever runs.
func (s *session) expire(now time.Time, shutdown bool) {
	switch {
	case s.state == stateEnded:
	case s.state == stateWaiting && (shutdown || now.After(s.connectBy)):
		s.rec.close()
		if shutdown {
			// Never connected: it stays queued, and its token may still be
			// used after the restart (Recover reloads it).
			s.state = stateEnded
			s.svc.drop(s.id)
			return
		}
		s.state = stateEnded
		s.fail(fmt.Sprintf("no client connected within %s of creation (live.connect_timeout)", s.svc.cfg.connectWithin()))
	case shutdown:
		s.stopped = true
		s.finish(s.svc.halt, "")
	case s.state == stateDetached && now.Sub(s.lastSeen) > s.svc.cfg.ReconnectGrace:
		s.log.Info("client did not reconnect; finalising")
		s.stopped = true
		s.finish(context.Background(), "")
	case s.state == stateAttached && now.Sub(s.lastSeen) > s.svc.cfg.IdleTimeout:
		s.log.Info("idle timeout; finalising")
		s.stopped = true
		s.finish(context.Background(), "")
	}
}

// endFrom finishes the session from outside: DELETE (cause nil) or its key's
// revocation (cause ErrKeyRevoked: its client hears nothing more and the
// job ends as error 401). It returns once the session has ended, false
// when it had already.
func (s *session) endFrom(cause error) bool {
	reply := make(chan bool, 1)
	ctx := context.Background()
	if s.call(ctx, endReq{cause: cause, reply: reply}) != nil {
		return false
	}
	ok, err := await(ctx, s, reply)
	return err == nil && ok
}

// onEnd is endReq's work.
func (s *session) onEnd(cause error) {
	s.stopped = true
	if e, ok := cause.(*errcode.Error); ok {
		s.endErr = cause
		s.listener = nil // the revoked client hears nothing more
		s.finish(context.Background(), e.Msg)
		return
	}
	s.finish(context.Background(), "")
}
