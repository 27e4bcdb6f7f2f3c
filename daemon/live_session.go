package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"github.com/earshot-dev/earshot/ingest"
	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/pipeline"
	"github.com/earshot-dev/earshot/store"
)

// Live session errors, each mapped by the WebSocket door to a close code.
var (
	// ErrSessionEnded is returned when audio or a stop arrives for a
	// session that has ended (close 4404).
	ErrSessionEnded = newError(ErrNotFound, nil, "session has ended")
	// ErrBadMessage is returned for a client message that is not one of the
	// protocol's (close 4400).
	ErrBadMessage = errors.New("daemon: bad message")
)

type liveState int

const (
	stateWaiting  liveState = iota // created, never connected
	stateAttached                  // a client is connected
	stateDetached                  // the client went away; may reconnect
	stateEnded                     // finalised
)

// liveSession is one live job while it runs. Its state is guarded by mu and
// changed only by the connected client's goroutine (Write, Stop), the
// reaper (expire) and DELETE; emit runs under mu.
type liveSession struct {
	d       *Daemon
	id      string
	account string
	p       *params.Live
	format  media.Format
	expires time.Time
	log     *slog.Logger
	done    chan struct{}

	mu       sync.Mutex
	state    liveState              // guarded by mu
	gen      int                    // guarded by mu: attachment generation
	sink     func([]byte) bool      // guarded by mu: current client, nil when none
	kick     func()                 // guarded by mu
	lastSeen time.Time              // guarded by mu
	received int64                  // guarded by mu: bytes taken in, header included
	header   int64                  // guarded by mu: WAV header bytes skipped at the start
	framer   *media.Framer          // guarded by mu: raw frames to 16 kHz PCM; set by startLocked
	file     *os.File               // guarded by mu: the recording, a WAV file
	audio    int64                  // guarded by mu: audio bytes in file
	live     *recognizer.Live       // guarded by mu
	finals   []recognizer.Utterance // guarded by mu
	messages *messageLog            // guarded by mu: what result.messages keeps (live_messages.go)
	stopped  bool                   // guarded by mu
	resync   bool                   // guarded by mu: a reconnected client may resend acked bytes
	cursor   int64                  // guarded by mu: client offset inside the resent overlap, -1 unknown
	lastSync time.Time              // guarded by mu
	sessErr  error                  // guarded by mu: first pipeline error
	started  time.Time              // guarded by mu: first connection
	addons   *liveAddons            // guarded by mu: realtime add-ons, nil until used (live_addons.go)
	busy     time.Duration          // guarded by mu: time spent in the recogniser (result.metadata.transcription_time)
	route    *pipeline.LiveRoute    // guarded by mu: the engine the recogniser runs on (set at start), nil before

	// connectBy ends the session as 408 when no client has connected by
	// then (live.connect_timeout); set at creation.
	connectBy time.Time
	// keyID is the API key that created the session ("" for SIP); revoking
	// it ends the session (live_revoke.go).
	keyID string
	// endErr is why the session was ended from outside (its key was
	// revoked), nil otherwise; guarded by mu.
	endErr error
	// batchPass says a batch pass follows the end (live_batchpass.go);
	// guarded by mu.
	batchPass bool
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

// newSession prepares a session and its recording file.
func (d *Daemon) newSession(job *store.Job, p *params.Live) (*liveSession, error) {
	s := &liveSession{
		d: d, id: job.ID, account: job.Account, p: p, format: liveFormat(p),
		expires: job.CreatedAt.Add(d.cfg.Live.TokenTTL),
		log:     d.log.With("component", "live", "session_id", job.ID),
		done:    make(chan struct{}),
	}
	s.messages = newMessageLog(d.cfg.Live.MaxStoredMessageBytes)
	s.connectBy = job.CreatedAt.Add(d.cfg.Live.connectWithin())
	s.keyID = job.KeyID
	path, err := d.recordingPath(job.Blob)
	if err != nil {
		return nil, err
	}
	f, err := createRecording(path, s.format)
	if err != nil {
		return nil, err
	}
	s.file = f
	return s, nil
}

// createRecording creates (truncating) a session's WAV file with a header
// of unknown length, ready for appending.
func createRecording(path string, f media.Format) (*os.File, error) {
	file, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err == nil {
		_, err = file.Write(media.AppendWAVHeader(nil, f, -1))
		if err != nil {
			file.Close()
		}
	}
	if errors.Is(err, syscall.ENOSPC) {
		return nil, fmt.Errorf("%w: %w", ErrNoSpace, err)
	}
	if err != nil {
		return nil, fmt.Errorf("create recording: %w", err)
	}
	return file, nil
}

func (s *liveSession) closeFile() {
	if s.file != nil {
		s.file.Close()
		s.file = nil
	}
}

// Attachment is one client connection to a live session; it implements the
// door contract.
type Attachment struct {
	s   *liveSession
	gen int
	// acks is set when the attachment's client reads messages (the
	// WebSocket): only its audio is acknowledged to it.
	acks bool
}

var _ ingest.Session = (*Attachment)(nil)

func (s *liveSession) attach(ctx context.Context, out func([]byte) bool, kick func()) (*Attachment, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == stateEnded {
		return nil, ErrSessionEnded
	}
	if out != nil {
		if s.kick != nil {
			s.kick() // a newer connection takes over
		}
		s.sink, s.kick = out, kick
	}
	s.gen++
	s.lastSeen = time.Now()
	// Bytes short of a whole frame were never acked: the client resends them.
	if s.framer != nil {
		s.received -= int64(s.framer.Pending())
		s.framer.Drop()
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
		if err := s.startLocked(); err != nil {
			return nil, err
		}
	}
	s.log.Info("client attached", "generation", s.gen)
	return &Attachment{s: s, gen: s.gen, acks: out != nil}, nil
}

// startLocked marks the job processing and starts the recogniser.
func (s *liveSession) startLocked() error {
	if _, err := s.d.db.UpdateJob(s.id, func(j *store.Job) ([]*store.Delivery, error) {
		j.Status = store.StatusProcessing
		return nil, nil
	}); err != nil {
		return err
	}
	// The request's speech_threshold as asked, 0 included (params owns
	// its default).
	threshold := s.p.PreProcessing.SpeechThreshold
	cfg := recognizer.LiveConfig{
		Channels:              s.p.Channels,
		Language:              s.p.Language(),
		Endpointing:           time.Duration(s.p.Endpointing * float64(time.Second)),
		MaxWithoutEndpointing: time.Duration(s.p.MaximumDurationWithoutEndpointing * float64(time.Second)),
		SpeechThreshold:       &threshold,
		AudioEnhancer:         s.p.PreProcessing.AudioEnhancer,
		Partials:              s.p.MessagesConfig.ReceivePartialTranscripts || s.p.Callback && s.p.CallbackConfig.ReceivePartialTranscripts,
		PartialInterval:       s.d.cfg.Live.PartialInterval,
		// Narrowband sessions decode as they arrive too, in segments
		// through short pauses (recognizer/live_segment.go): as accurate
		// as one pass per utterance with the channel's normalisation, at
		// a fraction of its CPU and with no decode after the endpoint
		// (bench/README.md, issue 14).
		DecoderWait: s.d.cfg.Live.DecoderWait,
	}
	cfg.SetDefaults()
	lo := pipeline.LiveOptions{
		Model: s.p.Model, Languages: s.p.LanguageConfig.Languages, CodeSwitching: s.p.LanguageConfig.CodeSwitching,
		// A call (8 kHz PCMU/PCMA from the doors, or narrowband
		// WebSocket audio) decodes with the telephone-band model.
		Narrowband:  s.format.SampleRate < recognizer.SampleRate,
		DecoderWait: cfg.DecoderWait,
		Notify:      func(m string) { s.sendLocked(errorMsg(s.id, "", m)) },
	}
	if rp := s.p.RealtimeProcessing; rp.CustomVocabulary {
		lo.Vocabulary = rp.CustomVocabularyConfig
	}
	rt, err := s.d.pl.Engines.Live(lo)
	if err != nil {
		return err
	}
	rt.Configure(&cfg)
	s.route = rt
	framer, err := media.NewFramer(s.format, recognizer.SampleRate)
	if err != nil {
		return err
	}
	live, err := recognizer.NewLive(rt.Engine, cfg, s.onEvent)
	if err != nil {
		return fmt.Errorf("start recogniser: %w", err)
	}
	s.live, s.framer = live, framer
	s.sendLocked(msg("start_session", s.id, nil))
	s.sendLocked(msg("start_recording", s.id, nil))
	return nil
}

// Done is closed when the session has ended.
func (a *Attachment) Done() <-chan struct{} { return a.s.done }

// ID is the live job's id.
func (a *Attachment) ID() string { return a.s.id }

// Format is the audio format the session was opened for (what Write takes);
// the WebRTC door negotiates its codec from it.
func (a *Attachment) Format() media.Format { return a.s.format }

// Detach records that this connection went away; the session waits for a
// reconnect until the grace period ends.
func (a *Attachment) Detach() {
	s := a.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gen != a.gen || s.state != stateAttached {
		return
	}
	s.state = stateDetached
	s.sink, s.kick = nil, nil
	s.lastSeen = time.Now()
	s.log.Info("client detached")
}

// Write takes raw audio in the session's format, runs it through the
// pipeline, stores it and acks it.
func (a *Attachment) Write(ctx context.Context, audio []byte) error {
	s := a.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := a.currentLocked(); err != nil {
		return err
	}
	if len(audio) > s.d.cfg.Live.MaxFrameBytes {
		return newError(ErrTooLarge, nil, "frame of %d bytes > limit %d", len(audio), s.d.cfg.Live.MaxFrameBytes)
	}
	s.lastSeen = time.Now()
	s.pumpAddonsLocked()
	if s.stopped {
		s.deliverLocked(errorMsg(s.id, "audio_chunk", "audio after stop_recording is ignored"), a.acks)
		return nil
	}
	if s.resync {
		dup, from := s.overlapLocked(audio)
		if dup > 0 {
			audio = audio[dup:]
			if len(audio) == 0 {
				s.ackLocked(a, from, from+int64(dup))
				return nil
			}
		}
	}
	from := s.received
	s.received += int64(len(audio))
	if from == 0 && bytes.HasPrefix(audio, []byte("RIFF")) {
		n, err := s.skipHeaderLocked(audio)
		if err != nil {
			s.received = from
			s.deliverLocked(errorMsg(s.id, "audio_chunk", err.Error()), a.acks)
			return nil
		}
		s.header = n
		audio = audio[n:]
	}
	pcm, whole := s.framer.Push(audio)
	if err := s.processLocked(ctx, whole, pcm); err != nil {
		return err
	}
	s.ackLocked(a, from, s.received-int64(s.framer.Pending()))
	return nil
}

// skipHeaderLocked parses a WAV header at the very start of the stream.
func (s *liveSession) skipHeaderLocked(b []byte) (int64, error) {
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
func (s *liveSession) secondsAt(off int64) float64 {
	off -= s.header
	if off < 0 {
		off = 0
	}
	return pipeline.Round3(float64(off/int64(s.format.FrameSize())) / float64(s.format.SampleRate))
}

// pending is the number of bytes held short of a whole frame.
func (s *liveSession) pending() int {
	if s.framer == nil {
		return 0
	}
	return s.framer.Pending()
}

// processLocked stores whole frames and feeds their samples to the
// recogniser.
func (s *liveSession) processLocked(ctx context.Context, frames []byte, pcm [][]int16) error {
	if len(frames) == 0 {
		return nil
	}
	if _, err := s.file.Write(frames); err != nil {
		if errors.Is(err, syscall.ENOSPC) {
			return fmt.Errorf("%w: %w", ErrNoSpace, err)
		}
		return fmt.Errorf("store audio: %w", err)
	}
	s.audio += int64(len(frames))
	if time.Since(s.lastSync) > time.Second {
		s.file.Sync()
		s.lastSync = time.Now()
	}
	start := time.Now()
	err := s.live.Write(ctx, pcm)
	s.busy += time.Since(start)
	if err != nil {
		return fmt.Errorf("recognise: %w", err)
	}
	return nil
}

func (a *Attachment) currentLocked() error {
	s := a.s
	if s.state == stateEnded {
		return ErrSessionEnded
	}
	if s.gen != a.gen {
		return newError(ErrNotFound, nil, "a newer connection took over this session")
	}
	return nil
}

// Stop ends the recording: ack, remaining finals, post-processing, result,
// end_session. Later stops are acked and ignored.
func (a *Attachment) Stop(ctx context.Context) error {
	s := a.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := a.currentLocked(); err != nil {
		return err
	}
	s.lastSeen = time.Now()
	s.stopLocked(ctx, a)
	return nil
}

func (s *liveSession) stopLocked(ctx context.Context, a *Attachment) {
	dur := s.secondsAt(s.received - int64(s.pending()))
	if s.stopped || s.wantsAcks(a) {
		m := msg("stop_recording", s.id, map[string]any{"recording_duration": dur, "recording_left_to_process": 0})
		m["acknowledged"], m["error"] = true, nil
		s.deliverLocked(m, a.acks)
	}
	if s.stopped {
		return // later stops are acked and ignored
	}
	s.stopped = true
	s.finishLocked(ctx, "")
}

// finishLocked runs the end of the session once: flush, messages, result,
// job record. failure != "" ends the job as error instead.
func (s *liveSession) finishLocked(ctx context.Context, failure string) {
	if s.state == stateEnded {
		return
	}
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("live finish panicked", "panic", r, "stack", string(debug.Stack()))
		}
	}()
	finishing := time.Now()
	if n := s.pending(); n > 0 {
		s.sendLocked(errorMsg(s.id, "", fmt.Sprintf("%d trailing bytes do not make a whole sample frame of %d bytes; discarded", n, s.format.FrameSize())))
	}
	if s.live != nil {
		if tail := s.framer.Flush(); len(tail) > 0 && len(tail[0]) > 0 {
			s.live.Write(ctx, tail)
		}
		if err := s.live.Flush(ctx); err != nil {
			s.sendLocked(errorMsg(s.id, "", "recogniser: "+err.Error()))
		}
	}
	dur := s.secondsAt(s.received)
	if s.started.IsZero() && failure == "" {
		failure = "session never connected"
	}
	s.state = stateEnded
	if s.live != nil {
		s.live.Close()
	}
	s.finalizeFileLocked()
	if failure != "" {
		s.failLocked(failure)
		return
	}
	s.batchPass = s.batchPassWanted()
	s.messages.close(s.id)
	s.sendLocked(msg("end_recording", s.id, map[string]any{"recording_duration": dur}))
	res := s.resultLocked(dur)
	s.sendLocked(msg("post_transcript", s.id, res.Transcription))
	s.postProcessLocked(ctx, res)
	// Recognising while the audio came, then the end's work up to here.
	res.Metadata.TranscriptionTime = pipeline.Round3((s.busy + time.Since(finishing)).Seconds())
	s.sendLocked(msg("post_final_transcript", s.id, res))
	s.sendLocked(msg("end_session", s.id, nil))
	res.Messages = s.messages.messages()
	body, err := json.Marshal(res)
	if err != nil {
		s.failLocked("encode result: " + err.Error())
		return
	}
	_, err = s.d.db.UpdateJob(s.id, func(j *store.Job) ([]*store.Delivery, error) {
		j.Status = store.StatusDone
		j.CompletedAt = time.Now().UTC()
		j.Result = body
		j.File = liveFileRecord(s.id, s.format.Channels, dur)
		s.labelPassLocked(j)
		if s.route != nil {
			if j.PostSessionMetadata == nil {
				j.PostSessionMetadata = map[string]any{}
			}
			for k, v := range s.route.Notes() { // engine, band, vocabulary, fallback
				j.PostSessionMetadata[k] = v
			}
		}
		return nil, nil
	})
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		s.log.Error("store live result", "error", err)
	}
	s.d.metrics.jobsFinished.WithLabelValues(string(store.KindLive), string(store.StatusDone)).Inc()
	if s.batchPass {
		signal(s.d.wake)
	}
	s.endLocked()
	s.log.Info("live session ended", "audio_seconds", dur)
}

// liveFileRecord is the File record of a live job's recording.
func liveFileRecord(id string, channels int, dur float64) *store.File {
	name := id + ".wav"
	return &store.File{ID: id, Filename: &name, AudioDuration: &dur, Channels: &channels}
}

// failLocked ends the job as error (408 when it never connected).
func (s *liveSession) failLocked(reason string) {
	code := 500
	if s.started.IsZero() {
		code = 408
	}
	if s.endErr != nil {
		code = Status(s.endErr)
	}
	blob := ""
	_, err := s.d.db.UpdateJob(s.id, func(j *store.Job) ([]*store.Delivery, error) {
		j.Status = store.StatusError
		j.CompletedAt = time.Now().UTC()
		j.ErrorCode = code
		j.ErrorMessage = reason
		if s.started.IsZero() {
			// Never connected: the recording is a bare header, kept by
			// nothing once the record stops naming it.
			blob, j.Blob = j.Blob, ""
		}
		if j.PostSessionMetadata == nil {
			j.PostSessionMetadata = map[string]any{}
		}
		j.PostSessionMetadata["error"] = reason
		return nil, nil
	})
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		s.log.Error("store live failure", "error", err)
	} else if blob != "" {
		s.closeFile()
		if err := s.d.db.RemoveBlob(blob); err != nil {
			s.log.Error("remove empty recording", "error", err)
		}
	}
	s.d.metrics.jobsFinished.WithLabelValues(string(store.KindLive), string(store.StatusError)).Inc()
	s.log.Info("live session failed", "status", code, "error", reason)
	s.endLocked()
}

func (s *liveSession) endLocked() {
	// The door closes the socket after end_session (it watches Done);
	// kicking it here would race that.
	s.sink, s.kick = nil, nil
	close(s.done)
	s.d.dropSession(s.id)
}

// finalizeFileLocked writes the real sizes into the WAV header and syncs.
func (s *liveSession) finalizeFileLocked() {
	if s.file == nil {
		return
	}
	if _, err := s.file.WriteAt(media.AppendWAVHeader(nil, s.format, s.audio), 0); err != nil {
		s.log.Error("finalise recording header", "error", err)
	}
	s.file.Sync()
	path := s.file.Name()
	s.closeFile()
	if err := s.d.commitRecording(path); err != nil {
		s.log.Error("store recording", "error", err)
	}
}

// resultLocked builds the live result from the finals so far.
func (s *liveSession) resultLocked(dur float64) *pipeline.Result {
	detecting := s.route != nil && s.route.Language == ""
	return pipeline.LiveResult(s.finals, dur, s.format.Channels, s.languageLocked(), detecting)
}

// languageLocked is the session's language when nothing was detected: the
// one asked for, else the routed engine's first.
func (s *liveSession) languageLocked() string {
	if l := s.p.Language(); l != "" {
		return l
	}
	if s.route != nil {
		if l := s.route.DefaultLanguage(); l != "" {
			return l
		}
	}
	return s.d.pl.Engines.Embedded().Languages()[0]
}

// expire is the reaper's check; shutdown finalises whatever runs.
func (s *liveSession) expire(ctx context.Context, now time.Time, shutdown bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.state == stateEnded:
	case s.state == stateWaiting && (shutdown || now.After(s.connectBy)):
		if shutdown {
			// Never connected: it stays queued, and its token may still be
			// used after the restart (Recover reloads it).
			s.closeFile()
			close(s.done)
			s.d.dropSession(s.id)
			return
		}
		s.state = stateEnded
		s.closeFile()
		s.failLocked(fmt.Sprintf("no client connected within %s of creation (live.connect_timeout)", s.d.cfg.Live.connectWithin()))
	case shutdown:
		s.stopped = true
		s.finishLocked(ctx, "")
	case s.state == stateDetached && now.Sub(s.lastSeen) > s.d.cfg.Live.ReconnectGrace:
		s.log.Info("client did not reconnect; finalising")
		s.stopped = true
		s.finishLocked(ctx, "")
	case s.state == stateAttached && now.Sub(s.lastSeen) > s.d.cfg.Live.IdleTimeout:
		s.log.Info("idle timeout; finalising")
		s.stopped = true
		s.finishLocked(ctx, "")
	}
}

// stopForDelete ends a running session before its job is deleted.
func (s *liveSession) stopForDelete() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == stateEnded {
		return
	}
	s.stopped = true
	s.finishLocked(context.Background(), "")
}

// onEvent turns recogniser events into protocol messages (runs under mu).
func (s *liveSession) onEvent(ev recognizer.Event) {
	switch ev.Kind {
	case recognizer.EventSpeechStart, recognizer.EventSpeechEnd:
		s.sendLocked(msg(ev.Kind.String(), s.id, map[string]any{"time": pipeline.Round3(ev.Time), "channel": ev.Channel}))
	case recognizer.EventPartial, recognizer.EventFinal:
		u := ev.Utterance
		if u.Language == "" {
			u.Language = s.languageLocked()
		}
		u = s.spellLocked(u)
		if ev.Kind == recognizer.EventFinal {
			if len(u.Words) == 0 {
				return
			}
			s.finals = append(s.finals, u)
		}
		s.sendLocked(msg("transcript", s.id, map[string]any{
			"id":        liveUtteranceID(s.id, ev.ID),
			"is_final":  ev.Kind == recognizer.EventFinal,
			"utterance": pipeline.ContractUtterance(u, u.Language),
		}))
		if ev.Kind == recognizer.EventFinal {
			s.realtimeLocked(ev.ID, u)
		}
	case recognizer.EventError:
		if s.sessErr == nil {
			s.sessErr = ev.Err
		}
		s.sendLocked(errorMsg(s.id, "", "recogniser: "+Message(ev.Err)+": "+ev.Err.Error()))
	}
}
