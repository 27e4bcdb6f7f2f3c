package remote

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/earshot-dev/earshot/recognizer"
)

// keepCapacity is the largest buffer (in samples, 1 minute) a stream keeps
// for the next utterance after Finish; a bigger one is dropped.
const keepCapacity = 60 * recognizer.SampleRate

// Stream buffers one channel's audio and sends each utterance to the
// server at Finish. It holds one request slot of its Engine until Close.
// Not safe for concurrent use (like every recognizer.Stream); the partial
// request it may run in the background is its own, waited for by Finish
// and Close.
type Stream struct {
	e      *Engine
	lang   string // requested language; "" lets the server detect it
	prompt string
	closed bool
	buf    []int16 // audio since the last Finish, at most maxSamples

	// Partial requests (see Partial). The running one reads buf[:n] for
	// the n it started with; Write only appends beyond it and Finish
	// waits for it before reusing buf.
	lastPartial   time.Time          // when the last partial request started
	partialLen    int                // len(buf) the last partial request covered
	partialDone   chan struct{}      // closed when the running partial request ends; nil when none
	cancelPartial context.CancelFunc // cancels the running partial request
	wg            sync.WaitGroup     // the partial request goroutine

	mu  sync.Mutex
	hyp recognizer.Hypothesis // guarded by mu; last partial result
}

var _ recognizer.Stream = (*Stream)(nil)

// Write appends 16 kHz mono samples to the current utterance. It fails
// with an error wrapping ErrTooLong, keeping nothing of pcm, when the
// utterance would exceed MaxAudio, and with recognizer.ErrClosed after
// Close.
func (s *Stream) Write(pcm []int16) error {
	if s.closed {
		return fmt.Errorf("remote: stream: %w", recognizer.ErrClosed)
	}
	if n := len(s.buf) + len(pcm); n > maxSamples {
		return fmt.Errorf("remote: utterance %d samples > limit %d (%v): %w", n, maxSamples, MaxAudio, ErrTooLong)
	}
	s.buf = append(s.buf, pcm...)
	return nil
}

// Partial returns the result of the last partial request that completed
// for the current utterance (text and words), false when there is none or
// it had no words. It never blocks on the network: when partials are
// enabled (Config.PartialInterval > 0), no partial request is running,
// PartialInterval has passed since the last one started, at least 0.1 s
// of audio has been written and some of it is new since the last partial
// request, and the circuit breaker is closed, it starts one request in
// the background for the utterance so far (no retries). So a stream has
// at most one partial request in flight, and each re-sends the whole
// utterance: the caller's endpointing bounds its cost.
func (s *Stream) Partial() (recognizer.Hypothesis, bool) {
	if s.closed {
		return recognizer.Hypothesis{}, false
	}
	s.reapPartial()
	// The answer as of this call: a request started now answers a later
	// call (its goroutine may store it before this one returns).
	s.mu.Lock()
	h := s.hyp
	s.mu.Unlock()
	if s.partialDone == nil && s.e.cfg.partialsEnabled() && len(s.buf) >= minSamples && len(s.buf) > s.partialLen &&
		time.Since(s.lastPartial) >= s.e.cfg.PartialInterval && s.e.breaker.closed() {
		s.startPartial()
	}
	return h, len(h.Words) > 0
}

// reapPartial forgets a partial request that has ended.
func (s *Stream) reapPartial() {
	if s.partialDone == nil {
		return
	}
	select {
	case <-s.partialDone:
		s.partialDone, s.cancelPartial = nil, nil
	default:
	}
}

// startPartial runs one request for buf so far in a goroutine owned by s.
func (s *Stream) startPartial() {
	pcm := s.buf[:len(s.buf):len(s.buf)]
	s.partialLen = len(pcm)
	s.lastPartial = time.Now()
	ctx, cancel := s.e.requestContext(context.Background())
	done := make(chan struct{})
	s.partialDone, s.cancelPartial = done, cancel
	s.wg.Go(func() {
		defer close(done)
		defer cancel()
		defer func() {
			if r := recover(); r != nil {
				s.e.logger.Error("remote partial request panicked", "error", r, "stack", string(debug.Stack()))
			}
		}()
		res, err := s.e.send(ctx, request{action: "partial", path: "/audio/transcriptions", pcm: pcm, language: s.lang, prompt: s.prompt, words: true}, true)
		if err != nil {
			if ctx.Err() == nil {
				s.e.logger.Debug("remote partial request failed", "error", err)
			}
			return
		}
		u := toUtterance(res, float64(len(pcm))/recognizer.SampleRate, s.lang)
		s.mu.Lock()
		s.hyp = recognizer.Hypothesis{Text: u.Text, Words: u.Words}
		s.mu.Unlock()
	})
}

// stopPartial cancels a running partial request and waits for it.
func (s *Stream) stopPartial() {
	if s.cancelPartial != nil {
		s.cancelPartial()
	}
	s.wg.Wait()
	s.partialDone, s.cancelPartial = nil, nil
}

// Finish is FinishContext without a deadline of its own: Config.Timeout
// per attempt, the retries and Engine.Close bound it.
func (s *Stream) Finish() (recognizer.Utterance, error) {
	return s.FinishContext(context.Background())
}

// FinishContext ends the current utterance: it cancels a running partial
// request, sends the audio written since the last Finish (retrying as
// Config says) and returns the server's words with times in seconds from
// that audio's first sample. Less than 0.1 s of audio gives an utterance
// with no words without a request. The audio is discarded whatever
// happens, and the stream may be written again for the next utterance.
// Errors wrap ErrUnavailable, ErrBadResponse, ErrTimeout, recognizer.ErrClosed
// (stream or engine closed) or ctx's cause.
func (s *Stream) FinishContext(ctx context.Context) (recognizer.Utterance, error) {
	if s.closed {
		return recognizer.Utterance{}, fmt.Errorf("remote: stream: %w", recognizer.ErrClosed)
	}
	s.stopPartial()
	pcm := s.buf
	defer s.reset()
	u := recognizer.Utterance{Language: s.lang}
	if len(pcm) < minSamples {
		return u, nil
	}
	rctx, cancel := s.e.requestContext(ctx)
	defer cancel()
	res, err := s.e.send(rctx, request{action: "transcribe", path: "/audio/transcriptions", pcm: pcm, language: s.lang, prompt: s.prompt, words: true},
		false)
	if err != nil {
		return u, err
	}
	return toUtterance(res, float64(len(pcm))/recognizer.SampleRate, s.lang), nil
}

// Decode transcribes pcm (16 kHz mono) as one utterance, as Write then
// Finish would, discarding first whatever was written since the last
// Finish. recognizer.Live calls it for one-pass finals (narrowband
// sessions), where the stream is given the utterance only at its end.
// Errors are those of Write and Finish.
func (s *Stream) Decode(pcm []int16) (recognizer.Utterance, error) {
	if s.closed {
		return recognizer.Utterance{}, fmt.Errorf("remote: stream: %w", recognizer.ErrClosed)
	}
	s.stopPartial()
	s.reset()
	if err := s.Write(pcm); err != nil {
		return recognizer.Utterance{Language: s.lang}, err
	}
	return s.Finish()
}

// reset starts a new utterance; no partial request may be running.
func (s *Stream) reset() {
	if cap(s.buf) > keepCapacity {
		s.buf = nil
	} else {
		s.buf = s.buf[:0]
	}
	s.partialLen = 0
	s.mu.Lock()
	s.hyp = recognizer.Hypothesis{}
	s.mu.Unlock()
}

// Close cancels and waits for a running partial request, discards the
// unfinished utterance and returns the slot to the engine. Idempotent;
// returns nil.
func (s *Stream) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	s.stopPartial()
	s.buf = nil
	s.e.release()
	return nil
}
