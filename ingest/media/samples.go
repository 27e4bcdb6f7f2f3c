package media

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/zaf/g711"
)

// Encoding is how one sample is stored.
type Encoding int

// The sample encodings this package decodes.
const (
	// LinearPCM is signed little-endian integer PCM, except 8-bit, which is
	// unsigned (offset 128) as the WAV specification requires. (The brief
	// called it PCM, which is the name of Decode's result type.)
	LinearPCM Encoding = iota + 1
	// Float is IEEE 754 little-endian floating point, nominally in [-1, 1].
	Float
	// ALaw is ITU-T G.711 A-law, one byte per sample.
	ALaw
	// MuLaw is ITU-T G.711 mu-law, one byte per sample.
	MuLaw
)

// String returns the encoding's lower-case name ("pcm", "float", "alaw",
// "mulaw"), or "encoding(N)" for an unknown value.
func (e Encoding) String() string {
	switch e {
	case LinearPCM:
		return "pcm"
	case Float:
		return "float"
	case ALaw:
		return "alaw"
	case MuLaw:
		return "mulaw"
	}
	return fmt.Sprintf("encoding(%d)", int(e))
}

// MaxFormatChannels is the largest channel count a Format may declare. It
// only bounds per-frame work and allocations; Decode accepts at most 8.
const MaxFormatChannels = 64

// Format describes raw interleaved samples.
type Format struct {
	Encoding   Encoding
	BitDepth   int // 8, 16, 24, 32 (LinearPCM); 32, 64 (Float); 8 (ALaw, MuLaw)
	SampleRate int // frames per second
	Channels   int // interleaved channels per frame
}

// FrameSize returns the bytes per interleaved frame (one sample of every
// channel), or 0 for a format that fails Validate.
func (f Format) FrameSize() int {
	if f.Validate() != nil {
		return 0
	}
	return f.BitDepth / 8 * f.Channels
}

// Validate reports whether samples of f can be decoded: a known encoding
// with one of its bit depths, 1..MaxFormatChannels channels and a positive
// sample rate. Errors wrap ErrUnsupported.
func (f Format) Validate() error {
	ok := false
	switch f.Encoding {
	case LinearPCM:
		ok = f.BitDepth == 8 || f.BitDepth == 16 || f.BitDepth == 24 || f.BitDepth == 32
	case Float:
		ok = f.BitDepth == 32 || f.BitDepth == 64
	case ALaw, MuLaw:
		ok = f.BitDepth == 8
	}
	if !ok {
		return fmt.Errorf("%w: %s with %d bits per sample", ErrUnsupported, f.Encoding, f.BitDepth)
	}
	if f.Channels < 1 || f.Channels > MaxFormatChannels {
		return fmt.Errorf("%w: %d channels (want 1..%d)", ErrUnsupported, f.Channels, MaxFormatChannels)
	}
	if f.SampleRate < 1 {
		return fmt.Errorf("%w: sample rate %d", ErrUnsupported, f.SampleRate)
	}
	return nil
}

// DecodeInterleaved converts raw interleaved samples of format f into
// per-channel float32 in [-1, 1], appending to dst[c]. dst must have
// f.Channels entries; a nil or empty dst is allocated. len(b) must be a whole
// number of frames, else the error wraps ErrCorrupt with the counts. Float
// input is clamped to [-1, 1] and NaN becomes 0. The work and the memory
// added are proportional to len(b).
func DecodeInterleaved(f Format, b []byte, dst [][]float32) ([][]float32, error) {
	if err := f.Validate(); err != nil {
		return dst, err
	}
	if len(dst) == 0 {
		dst = make([][]float32, f.Channels)
	}
	if len(dst) != f.Channels {
		return dst, fmt.Errorf("media: decode interleaved: dst has %d channels, format has %d", len(dst), f.Channels)
	}
	fs := f.FrameSize()
	if len(b)%fs != 0 {
		return dst, fmt.Errorf("%w: %d bytes is not a whole number of %d-byte frames", ErrCorrupt, len(b), fs)
	}
	frames := len(b) / fs
	if frames == 0 {
		return dst, nil
	}
	bps := f.BitDepth / 8
	for c := range dst {
		dst[c] = growFloat(dst[c], frames)
		out := dst[c][len(dst[c]) : len(dst[c])+frames]
		decodeChannel(f.Encoding, bps, b[c*bps:], fs, out)
		dst[c] = dst[c][:len(dst[c])+frames]
	}
	return dst, nil
}

// decodeChannel decodes len(out) samples, each stride bytes apart in b.
func decodeChannel(e Encoding, bps int, b []byte, stride int, out []float32) {
	switch {
	case e == LinearPCM && bps == 1:
		for i := range out {
			out[i] = float32(int(b[i*stride])-128) / 128
		}
	case e == LinearPCM && bps == 2:
		for i := range out {
			out[i] = float32(int16(binary.LittleEndian.Uint16(b[i*stride:]))) / 32768
		}
	case e == LinearPCM && bps == 3:
		for i := range out {
			p := b[i*stride:]
			v := int32(uint32(p[0])<<8|uint32(p[1])<<16|uint32(p[2])<<24) >> 8
			out[i] = float32(v) / 8388608
		}
	case e == LinearPCM && bps == 4:
		for i := range out {
			out[i] = float32(float64(int32(binary.LittleEndian.Uint32(b[i*stride:]))) / 2147483648)
		}
	case e == Float && bps == 4:
		for i := range out {
			out[i] = clampFloat(float64(math.Float32frombits(binary.LittleEndian.Uint32(b[i*stride:]))))
		}
	case e == Float && bps == 8:
		for i := range out {
			out[i] = clampFloat(math.Float64frombits(binary.LittleEndian.Uint64(b[i*stride:])))
		}
	case e == ALaw:
		for i := range out {
			out[i] = float32(g711.DecodeAlawFrame(b[i*stride])) / 32768
		}
	case e == MuLaw:
		for i := range out {
			out[i] = float32(g711.DecodeUlawFrame(b[i*stride])) / 32768
		}
	}
}

func clampFloat(v float64) float32 {
	switch {
	case v > 1:
		return 1
	case v < -1:
		return -1
	case v == v: // not NaN
		return float32(v)
	}
	return 0
}

// growFloat returns s with capacity for n more elements.
func growFloat(s []float32, n int) []float32 {
	if cap(s)-len(s) >= n {
		return s
	}
	ns := make([]float32, len(s), len(s)+max(n, len(s)/2))
	copy(ns, s)
	return ns
}

// ToInt16 converts float32 samples in [-1, 1] to int16 with rounding and
// clipping (values beyond full scale saturate, NaN becomes 0), appending to
// dst.
func ToInt16(in []float32, dst []int16) []int16 {
	dst = growInt16(dst, len(in))
	n := len(dst)
	dst = dst[:n+len(in)]
	out := dst[n:]
	for i, v := range in {
		x := float64(v) * 32768
		switch {
		case x >= 32767:
			out[i] = 32767
		case x <= -32768:
			out[i] = -32768
		case x == x:
			out[i] = int16(math.Round(x))
		default:
			out[i] = 0
		}
	}
	return dst
}

func growInt16(s []int16, n int) []int16 {
	if cap(s)-len(s) >= n {
		return s
	}
	ns := make([]int16, len(s), len(s)+max(n, len(s)/2))
	copy(ns, s)
	return ns
}
