package opus

/*
#cgo pkg-config: opus
#include <stdlib.h>
#include <opus.h>
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// MaxPacket is the longest payload Decode takes: an RTP payload in one
// Ethernet frame. libopus itself accepts up to 1275 bytes a frame and 120
// ms a packet.
const MaxPacket = 1500

// MaxFrameMs is the longest audio one Opus packet carries (RFC 6716 §3.2.5).
const MaxFrameMs = 120

// Decoder decodes one Opus stream. Not safe for concurrent use; Close frees
// the C state.
type Decoder struct {
	st       *C.OpusDecoder // nil after Close
	rate     int
	channels int
}

// NewDecoder creates a decoder producing rate Hz (8000, 12000, 16000, 24000
// or 48000: libopus decodes straight to that rate) with 1 or 2 channels (a
// stereo stream decodes to mono in a mono decoder).
func NewDecoder(rate, channels int) (*Decoder, error) {
	switch rate {
	case 8000, 12000, 16000, 24000, 48000:
	default:
		return nil, fmt.Errorf("%w: rate %d is not 8000, 12000, 16000, 24000 or 48000", ErrInit, rate)
	}
	if channels != 1 && channels != 2 {
		return nil, fmt.Errorf("%w: %d channels, want 1 or 2", ErrInit, channels)
	}
	var e C.int
	st := C.opus_decoder_create(C.opus_int32(rate), C.int(channels), &e)
	if st == nil || e != C.OPUS_OK {
		if st != nil {
			C.opus_decoder_destroy(st)
		}
		return nil, fmt.Errorf("%w: %s", ErrInit, C.GoString(C.opus_strerror(e)))
	}
	return &Decoder{st: st, rate: rate, channels: channels}, nil
}

// MaxSamples is the most samples (per channel) one Decode returns: 120 ms.
func (d *Decoder) MaxSamples() int { return d.rate * MaxFrameMs / 1000 }

// Decode decodes one packet and appends its samples (interleaved when the
// decoder has two channels) to pcm. An empty packet asks libopus to conceal
// one lost 20 ms frame. A payload libopus refuses returns ErrPacket and
// leaves pcm as it was; the decoder stays usable.
func (d *Decoder) Decode(packet []byte, pcm []int16) ([]int16, error) {
	if d.st == nil {
		return pcm, ErrClosed
	}
	if len(packet) > MaxPacket {
		return pcm, fmt.Errorf("%w: %d bytes > %d", ErrPacket, len(packet), MaxPacket)
	}
	frame := d.MaxSamples()
	if len(packet) == 0 {
		frame = d.rate / 50
	}
	n0 := len(pcm)
	pcm = growInt16(pcm, frame*d.channels)
	out := (*C.opus_int16)(unsafe.Pointer(&pcm[n0]))
	var data *C.uchar
	if len(packet) > 0 {
		data = (*C.uchar)(unsafe.Pointer(&packet[0]))
	}
	n := C.opus_decode(d.st, data, C.opus_int32(len(packet)), out, C.int(frame), 0)
	if n < 0 {
		return pcm[:n0], fmt.Errorf("%w: %s", ErrPacket, C.GoString(C.opus_strerror(n)))
	}
	return pcm[:n0+int(n)*d.channels], nil
}

// Close frees the C state; later calls return ErrClosed. Idempotent.
func (d *Decoder) Close() error {
	if d.st != nil {
		C.opus_decoder_destroy(d.st)
		d.st = nil
	}
	return nil
}

// growInt16 extends s by n samples, reallocating when its capacity is short.
func growInt16(s []int16, n int) []int16 {
	if cap(s)-len(s) < n {
		t := make([]int16, len(s), len(s)+n)
		copy(t, s)
		s = t
	}
	return s[:len(s)+n]
}
