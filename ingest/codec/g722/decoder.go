package g722

/*
#cgo pkg-config: spandsp
#include <stdint.h>
#include <inttypes.h>
#include <stdlib.h>
#include <spandsp/telephony.h>
#include <spandsp/g722.h>
*/
import "C"

import (
	"errors"
	"unsafe"
)

// Rate is the sample rate of decoded G.722 audio: two samples per byte.
const Rate = 16000

// ErrInit is returned by NewDecoder when spandsp cannot create a state.
var ErrInit = errors.New("g722: decoder init failed")

// ErrClosed is returned by a Decoder used after Close.
var ErrClosed = errors.New("g722: decoder closed")

// Decoder decodes one 64 kbit/s G.722 stream. Not safe for concurrent use;
// Close frees the C state.
type Decoder struct {
	st *C.g722_decode_state_t // nil after Close
}

// NewDecoder creates a decoder at 64 kbit/s, 16 kHz output.
func NewDecoder() (*Decoder, error) {
	st := C.g722_decode_init(nil, 64000, 0)
	if st == nil {
		return nil, ErrInit
	}
	return &Decoder{st: st}, nil
}

// Decode appends the samples of data (two per byte) to pcm. The ADPCM
// state carries from one call to the next.
func (d *Decoder) Decode(data []byte, pcm []int16) ([]int16, error) {
	if d.st == nil {
		return pcm, ErrClosed
	}
	if len(data) == 0 {
		return pcm, nil
	}
	n0 := len(pcm)
	need := 2 * len(data)
	if cap(pcm)-n0 < need {
		t := make([]int16, n0, n0+need)
		copy(t, pcm)
		pcm = t
	}
	pcm = pcm[:n0+need]
	n := C.g722_decode(d.st, (*C.int16_t)(unsafe.Pointer(&pcm[n0])), (*C.uint8_t)(unsafe.Pointer(&data[0])), C.int(len(data)))
	return pcm[:n0+max(0, min(int(n), need))], nil
}

// Close frees the C state; later calls return ErrClosed. Idempotent.
func (d *Decoder) Close() error {
	if d.st != nil {
		C.g722_decode_free(d.st)
		d.st = nil
	}
	return nil
}
