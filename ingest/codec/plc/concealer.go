package plc

/*
#cgo pkg-config: spandsp
#include <stdint.h>
#include <inttypes.h>
#include <stdlib.h>
#include <spandsp/telephony.h>
#include <spandsp/plc.h>
*/
import "C"

import (
	"errors"
	"math/rand/v2"
	"unsafe"
)

// MaxFill is the longest stretch of one loss synthesised by the C
// concealer, in samples; the fill has faded to silence long before
// (400 samples), so the rest of a longer loss is zeros.
const MaxFill = 16000

// overlapMax is the most plc_fillin writes whatever it is asked for
// (PLC_PITCH_OVERLAP_MAX: a quarter of the longest pitch period).
const overlapMax = C.PLC_PITCH_OVERLAP_MAX

// floorSigma is the standard deviation (16-bit LSBs) of the noise floor a
// fill ends in instead of digital silence once it has faded: about -72
// dBFS, above the batch segmenter's digital silence (-80 dBFS,
// recognizer/vad.go) and a step or two of mu-law's finest, far below any
// speech. Frames of zeros inside speech are far from anything the acoustic
// model knows: on the corpus tuning subset through mu-law with 3 % bursty
// loss the batch decode loses more words with silence fill than with this
// concealer (bench/CALLS.md, "3 % loss, word by word").
const floorSigma = 8

// ErrInit is returned by New when spandsp cannot create a state.
var ErrInit = errors.New("plc: concealer init failed")

// ErrClosed is returned by a Concealer used after Close.
var ErrClosed = errors.New("plc: concealer closed")

// Concealer conceals the losses of one mono stream of 16-bit PCM. Not
// safe for concurrent use; Close frees the C state.
type Concealer struct {
	st      *C.plc_state_t // nil after Close
	missing int            // samples concealed since audio was last received
	heard   bool           // audio was received: a fill has something to fade from
	noise   *rand.Rand     // the noise floor's (fixed seed: the output is reproducible); nil: none
	scratch [overlapMax]C.int16_t
}

// New returns a concealer whose history is silence.
func New() (*Concealer, error) {
	st := C.plc_init(nil)
	if st == nil {
		return nil, ErrInit
	}
	return &Concealer{st: st}, nil
}

// NewNoiseFloor is New whose fill, once audio was received, never has
// digital silence: where it has faded, a noise floor (floorSigma). Measured
// on 8 kHz mu-law only (bench/CALLS.md, "3 % loss, word by word").
func NewNoiseFloor() (*Concealer, error) {
	c, err := New()
	if err != nil {
		return nil, err
	}
	c.noise = rand.New(rand.NewPCG(0x10557, 0xf100))
	return c, nil
}

// Received takes audio as it arrived. After a loss it rewrites the first
// samples of pcm (up to a quarter pitch period), blending the fill into
// them; the rest is left as is.
func (c *Concealer) Received(pcm []int16) error {
	if c.st == nil {
		return ErrClosed
	}
	if len(pcm) == 0 {
		return nil
	}
	C.plc_rx(c.st, (*C.int16_t)(unsafe.Pointer(&pcm[0])), C.int(len(pcm)))
	c.missing = 0
	c.heard = true
	return nil
}

// Conceal overwrites pcm with the fill for that many lost samples, after
// those received and concealed so far: where it has faded, silence, or
// the noise floor of a NewNoiseFloor concealer once audio was received.
func (c *Concealer) Conceal(pcm []int16) error {
	if c.st == nil {
		return ErrClosed
	}
	all := pcm
	if n := min(len(pcm), MaxFill-c.missing); n > 0 {
		if n < overlapMax {
			// plc_fillin may write overlapMax samples at the start of a loss.
			C.plc_fillin(c.st, &c.scratch[0], C.int(n))
			for i := range n {
				pcm[i] = int16(c.scratch[i])
			}
		} else {
			C.plc_fillin(c.st, (*C.int16_t)(unsafe.Pointer(&pcm[0])), C.int(n))
		}
		c.missing += n
		pcm = pcm[n:]
	}
	clear(pcm)
	c.missing = min(c.missing+len(pcm), MaxFill)
	if c.heard && c.noise != nil {
		// Where the fill has faded to zeros: the noise floor.
		for i, v := range all {
			if v == 0 {
				all[i] = int16(c.noise.NormFloat64() * floorSigma)
			}
		}
	}
	return nil
}

// Close frees the C state; later calls return ErrClosed. Idempotent.
func (c *Concealer) Close() error {
	if c.st != nil {
		C.plc_free(c.st)
		c.st = nil
	}
	return nil
}
