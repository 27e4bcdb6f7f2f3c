package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strconv"
	"time"

	"github.com/earshot-dev/earshot/recognizer"
)

// maxRetryAfter bounds how long a server's Retry-After makes us wait.
const maxRetryAfter = 10 * time.Second

// errRequestTimeout is the cause of a request context that hit
// Config.Timeout.
var errRequestTimeout = errors.New("remote: request deadline")

// request is one transcription or translation to send.
type request struct {
	action   string  // "transcribe", "translate" or "partial", for errors and logs
	path     string  // "/audio/transcriptions" or "/audio/translations"
	pcm      []int16 // 16 kHz mono; read only
	language string  // "" lets the server detect it (never sent for translations)
	prompt   string
	words    bool // ask for word and segment timestamps
}

// body encodes r as multipart/form-data: file (a WAV), model, language,
// prompt, response_format and timestamp_granularities[] fields, as the
// OpenAI audio API defines them.
func (e *Engine) body(r request) (contentType string, body []byte) {
	var buf bytes.Buffer
	buf.Grow(wavHeaderSize + 2*len(r.pcm) + 2048)
	mw := multipart.NewWriter(&buf)
	h := make(textproto.MIMEHeader)
	h.Set("Content-Disposition", `form-data; name="file"; filename="audio.wav"`)
	h.Set("Content-Type", "audio/wav")
	part, _ := mw.CreatePart(h) // writes to a bytes.Buffer: no error
	part.Write(appendWAV(buf.AvailableBuffer(), r.pcm))
	field := func(k, v string) { mw.WriteField(k, v) }
	field("model", e.cfg.Model)
	if r.language != "" {
		field("language", r.language)
	}
	if r.prompt != "" {
		field("prompt", r.prompt)
	}
	field("response_format", "verbose_json")
	if r.words {
		field("timestamp_granularities[]", "word")
		field("timestamp_granularities[]", "segment")
	}
	mw.Close()
	return mw.FormDataContentType(), buf.Bytes()
}

// send posts r, retrying up to retries times after connection errors and
// retryable statuses with exponential backoff from 200ms (or the server's
// Retry-After, at most 10s), until the breaker opens. ctx bounds the
// whole call; each attempt is also bounded by Config.Timeout.
func (e *Engine) send(ctx context.Context, r request, retries int) (_ *verboseJSON, err error) {
	contentType, body := e.body(r)
	audio := float64(len(r.pcm)) / recognizer.SampleRate
	what := fmt.Sprintf("%s %.2fs of audio", r.action, audio)
	begin, attempts := time.Now(), 0
	defer func() { e.observe(r.action, begin, attempts, err) }()
	for attempt := 0; ; attempt++ {
		if err := e.breaker.allow(); err != nil {
			return nil, fmt.Errorf("%s: %w: %w", what, ErrUnavailable, err)
		}
		attempts++
		start := time.Now()
		res, retryAfter, out, err := e.attempt(ctx, what, r.path, contentType, body)
		open := e.record(out, err) == breakerOpen
		e.logger.Debug("remote request", "action", r.action, "attempt", attempt+1, "audio_seconds", audio,
			"elapsed_ms", time.Since(start).Milliseconds(), "error", err)
		if err == nil {
			return res, nil
		}
		if out != outcomeFailure || errors.Is(err, ErrTimeout) || attempt >= retries || open {
			return nil, err
		}
		wait := max(firstBackoff<<attempt, min(retryAfter, maxRetryAfter))
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%s: wait to retry: %w (after %w)", what, context.Cause(ctx), err)
		}
	}
}

// attempt makes one request and classifies its outcome for the breaker.
// what names the request in errors.
func (e *Engine) attempt(ctx context.Context, what, path, contentType string, body []byte) (
	res *verboseJSON, retryAfter time.Duration, out outcome, err error) {
	actx, cancel := context.WithTimeoutCause(ctx, e.cfg.Timeout, errRequestTimeout)
	defer cancel()
	// failed classifies a transport or body-read error.
	failed := func(action string, err error) (*verboseJSON, time.Duration, outcome, error) {
		switch {
		case ctx.Err() != nil:
			return nil, 0, outcomeNeutral, fmt.Errorf("%s: %w", what, context.Cause(ctx))
		case actx.Err() != nil:
			return nil, 0, outcomeFailure, fmt.Errorf("%s: %w after %v", what, ErrTimeout, e.cfg.Timeout)
		}
		return nil, 0, outcomeFailure, fmt.Errorf("%s: %s: %w: %w", what, action, ErrUnavailable, err)
	}
	req, err := http.NewRequestWithContext(actx, http.MethodPost, e.baseURL+path, bytes.NewReader(body))
	if err != nil { // the URL was validated in New
		return nil, 0, outcomeNeutral, fmt.Errorf("%s: %w", what, err)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "application/json")
	if e.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+string(e.cfg.APIKey))
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return failed("post", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return failed("read response", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		serr := &StatusError{StatusCode: resp.StatusCode, Message: errorMessage(data)}
		if retryableStatus(resp.StatusCode) {
			return nil, parseRetryAfter(resp.Header.Get("Retry-After")), outcomeFailure,
				fmt.Errorf("%s: %w", what, serr)
		}
		return nil, 0, outcomeSuccess, fmt.Errorf("%s: %w", what, serr)
	}
	if len(data) > maxResponseBytes {
		return nil, 0, outcomeSuccess, fmt.Errorf("%s: %w: %w over %d bytes", what, ErrBadResponse, errTooLarge, maxResponseBytes)
	}
	res, err = parseResponse(data)
	if err != nil {
		return nil, 0, outcomeSuccess, fmt.Errorf("%s: %w", what, err)
	}
	return res, 0, outcomeSuccess, nil
}

// parseRetryAfter reads a Retry-After header given in seconds (RFC 9110
// §10.2.3; the HTTP-date form is ignored).
func parseRetryAfter(v string) time.Duration {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0
	}
	return min(time.Duration(n)*time.Second, maxRetryAfter)
}

// record feeds an attempt's outcome to the breaker, logs transitions and
// returns the breaker's new state.
func (e *Engine) record(out outcome, err error) breakerState {
	from, to := e.breaker.done(out)
	switch {
	case from == to:
	case to == breakerOpen:
		e.logger.Warn("remote server failing, circuit open", "url", e.cfg.URL,
			"cooldown", e.cfg.BreakerCooldown, "error", err)
	case to == breakerClosed:
		e.logger.Info("remote server answering again, circuit closed", "url", e.cfg.URL)
	}
	return to
}
