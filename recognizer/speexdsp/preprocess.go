package speexdsp

/*
#cgo pkg-config: speexdsp
#include <stdlib.h>
#include <speex/speex_preprocess.h>

static int es_set_int(SpeexPreprocessState *st, int req, int v) {
	spx_int32_t x = v;
	return speex_preprocess_ctl(st, req, &x);
}
static int es_set_float(SpeexPreprocessState *st, int req, float v) {
	return speex_preprocess_ctl(st, req, &v);
}
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Frame sizes New accepts: SpeexDSP wants 10 to 20 ms frames, and more
// than 50 ms is certainly a mistake.
const (
	minFrameMs = 5
	maxFrameMs = 50
)

// Preprocessor denoises and levels one channel, frame by frame. It keeps
// state across frames (noise estimate, gain), so one Preprocessor serves
// exactly one channel. Not safe for concurrent use. Close frees the C
// state.
type Preprocessor struct {
	st        *C.SpeexPreprocessState // nil after Close
	frameSize int
}

// New creates a preprocessor for frames of frameSize samples at
// sampleRate Hz (8000..48000; a frame must be 5..50 ms, 10 or 20 ms is
// best). Invalid cfg fields give an error naming them; zero fields should
// be filled with SetDefaults first. SpeexDSP's VAD and dereverb stay off
// (the VAD is off by default; setting it, even to off, makes the library
// print a warning on stderr, so New leaves it alone).
func New(frameSize, sampleRate int, cfg Config) (*Preprocessor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if sampleRate < 8000 || sampleRate > 48000 {
		return nil, fmt.Errorf("%w: sample rate %d not in 8000..48000", ErrInit, sampleRate)
	}
	if frameSize*1000 < minFrameMs*sampleRate || frameSize*1000 > maxFrameMs*sampleRate {
		return nil, fmt.Errorf("%w: frame %d samples at %d Hz not in %d..%d ms", ErrInit, frameSize, sampleRate, minFrameMs, maxFrameMs)
	}
	st := C.speex_preprocess_state_init(C.int(frameSize), C.int(sampleRate))
	if st == nil {
		return nil, fmt.Errorf("%w: state for %d samples at %d Hz", ErrInit, frameSize, sampleRate)
	}
	p := &Preprocessor{st: st, frameSize: frameSize}
	onOff := func(b bool) int {
		if b {
			return 1
		}
		return 0
	}
	settings := []struct {
		name string
		rv   C.int
	}{
		{"denoise", C.es_set_int(st, C.SPEEX_PREPROCESS_SET_DENOISE, C.int(onOff(!cfg.DisableDenoise)))},
		{"noise_suppress_db", C.es_set_int(st, C.SPEEX_PREPROCESS_SET_NOISE_SUPPRESS, C.int(cfg.NoiseSuppressDB))},
		{"agc", C.es_set_int(st, C.SPEEX_PREPROCESS_SET_AGC, C.int(onOff(!cfg.DisableAGC)))},
		{"agc_level", C.es_set_float(st, C.SPEEX_PREPROCESS_SET_AGC_LEVEL, C.float(cfg.AGCLevel))},
		{"agc_max_gain_db", C.es_set_int(st, C.SPEEX_PREPROCESS_SET_AGC_MAX_GAIN, C.int(cfg.AGCMaxGainDB))},
		{"agc_increment_db", C.es_set_int(st, C.SPEEX_PREPROCESS_SET_AGC_INCREMENT, C.int(cfg.AGCIncrementDB))},
		{"agc_decrement_db", C.es_set_int(st, C.SPEEX_PREPROCESS_SET_AGC_DECREMENT, C.int(cfg.AGCDecrementDB))},
		{"dereverb", C.es_set_int(st, C.SPEEX_PREPROCESS_SET_DEREVERB, 0)},
	}
	for _, s := range settings {
		if s.rv != 0 {
			p.Close()
			return nil, fmt.Errorf("%w: setting %s rejected", ErrInit, s.name)
		}
	}
	return p, nil
}

// FrameSize is the number of samples Process handles at a time.
func (p *Preprocessor) FrameSize() int { return p.frameSize }

// Process denoises and levels frame in place. frame should hold exactly
// FrameSize samples; a longer slice is processed in whole frames and a
// trailing partial frame is left unchanged (so is everything after Close).
func (p *Preprocessor) Process(frame []int16) {
	if p.st == nil {
		return
	}
	for len(frame) >= p.frameSize {
		// The C side only touches the frame during the call.
		C.speex_preprocess_run(p.st, (*C.spx_int16_t)(unsafe.Pointer(&frame[0])))
		frame = frame[p.frameSize:]
	}
}

// Close frees the C state. Idempotent; returns nil.
func (p *Preprocessor) Close() error {
	if p.st != nil {
		C.speex_preprocess_state_destroy(p.st)
		p.st = nil
	}
	return nil
}
