package remote

import (
	"context"
	"errors"
	"time"
)

// Request outcomes reported in RequestStat.Outcome.
const (
	OutcomeOK          = "ok"           // the server answered a transcription
	OutcomeUnavailable = "unavailable"  // unreachable, or 5xx/429/408 on every attempt
	OutcomeTimeout     = "timeout"      // an attempt took longer than Config.Timeout
	OutcomeBadResponse = "bad_response" // a 4xx, or a 2xx that is not verbose_json
	OutcomeCircuitOpen = "circuit_open" // refused by the open circuit breaker, no request made
	OutcomeCancelled   = "cancelled"    // the caller or Engine.Close ended it
)

// RequestStat describes one finished request (a transcription, a partial
// or a translation, with its retries) for metrics. It carries no audio,
// text or credential.
type RequestStat struct {
	// Engine is Config.Name.
	Engine string
	// Action is "transcribe", "partial" or "translate".
	Action string
	// Outcome is one of the Outcome constants.
	Outcome string
	// Elapsed is the time from the first attempt to the answer or the
	// failure, retries and backoff included.
	Elapsed time.Duration
	// Attempts is the number of attempts sent to the server (0 when the
	// breaker refused the request).
	Attempts int
}

// outcomeOf classifies the error send returned.
func outcomeOf(err error) string {
	switch {
	case err == nil:
		return OutcomeOK
	case errors.Is(err, errCircuitOpen):
		return OutcomeCircuitOpen
	case errors.Is(err, ErrTimeout):
		return OutcomeTimeout
	case errors.Is(err, ErrUnavailable):
		return OutcomeUnavailable
	case errors.Is(err, ErrBadResponse):
		return OutcomeBadResponse
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return OutcomeCancelled
	}
	return OutcomeCancelled
}

// observe reports a finished request to the observer New was given.
func (e *Engine) observe(action string, start time.Time, attempts int, err error) {
	if e.observer == nil {
		return
	}
	e.observer(RequestStat{Engine: e.cfg.Name, Action: action, Outcome: outcomeOf(err), Elapsed: time.Since(start), Attempts: attempts})
}

// BreakerState is the circuit breaker's state: "closed" (requests flow),
// "open" (requests fail fast until the cooldown ends) or "half-open" (the
// cooldown is over; the next request is a probe).
func (e *Engine) BreakerState() string {
	e.breaker.mu.Lock()
	defer e.breaker.mu.Unlock()
	e.breaker.advanceLocked()
	return e.breaker.state.String()
}
