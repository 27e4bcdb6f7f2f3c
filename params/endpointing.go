package params

import (
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// Seconds is a duration the contract writes as a number of seconds
// (endpointing 0.05 is 50 ms). It marshals as that number, to the
// nanosecond, so stored request_params decode back to the same value.
type Seconds time.Duration

// secondsOf is the duration of f seconds, to the nearest nanosecond.
func secondsOf(f float64) Seconds { return Seconds(math.Round(f * float64(time.Second))) }

// D is the duration.
func (s Seconds) D() time.Duration { return time.Duration(s) }

// MarshalJSON writes the number of seconds.
func (s Seconds) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(s).Seconds()) }

// UnmarshalJSON reads a number of seconds, unchecked (decodeLive checks
// the bounds of what a request or stored params carry).
func (s *Seconds) UnmarshalJSON(b []byte) error {
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*s = secondsOf(f)
	return nil
}

// Endpointing is how a live session's utterances end (SPEC 2.3's
// endpointing and maximum_duration_without_endpointing, top-level fields of
// the body; Live embeds it). decodeLive fills it with its defaults and
// checks its bounds, the only place either is written: the session passes
// it on unchanged (recognizer.LiveConfig.Endpointing) and the recogniser
// reads it as it is.
type Endpointing struct {
	// Silence is the pause that ends an utterance (endpointing):
	// MinSilence to MaxSilence, default DefaultSilence.
	Silence Seconds `json:"endpointing"`
	// MaxUtterance cuts an utterance that has run this long without an
	// endpoint (maximum_duration_without_endpointing): MinMaxUtterance to
	// MaxMaxUtterance, default DefaultMaxUtterance.
	MaxUtterance Seconds `json:"maximum_duration_without_endpointing"`
}

// Endpointing defaults and bounds (SPEC 2.3).
const (
	DefaultSilence      = Seconds(50 * time.Millisecond)
	MinSilence          = Seconds(10 * time.Millisecond)
	MaxSilence          = Seconds(10 * time.Second)
	DefaultMaxUtterance = Seconds(5 * time.Second)
	MinMaxUtterance     = Seconds(5 * time.Second)
	MaxMaxUtterance     = Seconds(60 * time.Second)
)

// DefaultEndpointing is a session's endpointing when its body sets none.
func DefaultEndpointing() Endpointing {
	return Endpointing{Silence: DefaultSilence, MaxUtterance: DefaultMaxUtterance}
}

// decodeEndpointing reads the two fields of o into e (its defaults when
// absent), each problem naming its field.
func decodeEndpointing(p *problems, o *object, e *Endpointing) {
	*e = DefaultEndpointing()
	if f, path, ok := o.number("endpointing"); ok && inRange(p, path, f, MinSilence.D().Seconds(), MaxSilence.D().Seconds()) {
		e.Silence = secondsOf(f)
	}
	if f, path, ok := o.number("maximum_duration_without_endpointing"); ok &&
		inRange(p, path, f, MinMaxUtterance.D().Seconds(), MaxMaxUtterance.D().Seconds()) {
		e.MaxUtterance = secondsOf(f)
	}
}

// Validate reports a value outside the bounds decodeLive keeps, naming the
// field: for an Endpointing built in code (a benchmark's, a test's), as
// one the request decoder made always passes.
func (e Endpointing) Validate() error {
	switch {
	case e.Silence < MinSilence || e.Silence > MaxSilence:
		return fmt.Errorf("params: endpointing: %v not in %v..%v", e.Silence.D(), MinSilence.D(), MaxSilence.D())
	case e.MaxUtterance < MinMaxUtterance || e.MaxUtterance > MaxMaxUtterance:
		return fmt.Errorf("params: maximum_duration_without_endpointing: %v not in %v..%v", e.MaxUtterance.D(), MinMaxUtterance.D(), MaxMaxUtterance.D())
	}
	return nil
}
