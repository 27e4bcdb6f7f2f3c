package remote

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"net/textproto"
	"time"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/openai"
)

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

// send posts r through the engine's openai client, which retries by its
// one rule (package openai), each attempt gated and recorded by the
// breaker. noRetry makes one attempt (partials). ctx bounds the whole call.
func (e *Engine) send(ctx context.Context, r request, noRetry bool) (_ *verboseJSON, err error) {
	contentType, body := e.body(r)
	audio := float64(len(r.pcm)) / recognizer.SampleRate
	what := fmt.Sprintf("%s %.2fs of audio", r.action, audio)
	begin, attempts := time.Now(), 0
	defer func() { e.observe(r.action, begin, attempts, err) }()
	data, attempts, err := e.client.Post(ctx, openai.Request{Path: r.path, ContentType: contentType, Body: body, NoRetry: noRetry,
		Attempts: &attemptLog{e: e, action: r.action, audio: audio}})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	res, err := parseResponse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return res, nil
}

// attemptLog gates each attempt of one request with the breaker, records
// its outcome there and logs it at debug.
type attemptLog struct {
	e      *Engine
	action string
	audio  float64
	start  time.Time
}

func (a *attemptLog) Allow() error {
	a.start = time.Now()
	return a.e.breaker.allow()
}

func (a *attemptLog) Done(n int, o openai.Outcome, err error) (stop bool) {
	open := a.e.record(o, err) == breakerOpen
	a.e.logger.Debug("remote request", "action", a.action, "attempt", n, "audio_seconds", a.audio,
		"elapsed_ms", time.Since(a.start).Milliseconds(), "error", err)
	return open
}

// record feeds an attempt's outcome to the breaker, logs transitions and
// returns the breaker's new state.
func (e *Engine) record(out openai.Outcome, err error) breakerState {
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
