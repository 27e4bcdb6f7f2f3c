package media

import "fmt"

// Framer turns a live byte stream of raw interleaved samples (the frames of
// a WebSocket, a WHIP track or an RTP payload, cut anywhere) into int16 PCM
// per channel at one output rate. It keeps the bytes short of a whole
// sample frame for the next Push, decodes whole frames, resamples when the
// rates differ, and converts to int16. Chunking does not change the output:
// any split of the same bytes yields the same samples. Not safe for
// concurrent use.
type Framer struct {
	f     Format
	fs    int
	carry []byte // bytes short of a whole frame
	buf   []byte // carry + the pushed bytes; whole aliases it
	dec   [][]float32
	out   [][]int16
	rs    []*Resampler // nil when the rates match
}

// NewFramer returns a Framer for input format f producing rate Hz. Errors
// wrap ErrUnsupported for a format Validate refuses or a rate the
// Resampler does not take.
func NewFramer(f Format, rate int) (*Framer, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	fr := &Framer{f: f, fs: f.FrameSize(), dec: make([][]float32, f.Channels), out: make([][]int16, f.Channels)}
	if f.SampleRate != rate {
		for range f.Channels {
			r, err := NewResampler(f.SampleRate, rate)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrUnsupported, err)
			}
			fr.rs = append(fr.rs, r)
		}
	}
	return fr, nil
}

// Push takes the next bytes of the stream and returns the samples they
// complete, one slice per channel (possibly empty), and the whole frames
// they came from (carried bytes first); the rest waits in Pending. Both
// results are reused by the next call.
func (fr *Framer) Push(b []byte) (pcm [][]int16, whole []byte) {
	fr.buf = append(append(fr.buf[:0], fr.carry...), b...)
	n := len(fr.buf) - len(fr.buf)%fr.fs
	whole = fr.buf[:n]
	for c := range fr.dec {
		fr.dec[c] = fr.dec[c][:0]
		fr.out[c] = fr.out[c][:0]
	}
	// n is a whole number of frames of a valid format: no error.
	fr.dec, _ = DecodeInterleaved(fr.f, whole, fr.dec)
	for c, in := range fr.dec {
		if fr.rs != nil {
			in = fr.rs[c].Process(in, nil)
		}
		fr.out[c] = ToInt16(in, fr.out[c])
	}
	fr.carry = append(fr.carry[:0], fr.buf[n:]...)
	return fr.out, whole
}

// Pending is the number of bytes held short of a whole frame.
func (fr *Framer) Pending() int { return len(fr.carry) }

// Drop discards the bytes held short of a whole frame (a stream that
// resumes after a reconnect starts on a frame boundary).
func (fr *Framer) Drop() { fr.carry = fr.carry[:0] }

// Flush ends the stream: it drops any partial frame and returns the
// resampler's remaining output (nil slices when the rates match), ready for
// a new stream.
func (fr *Framer) Flush() [][]int16 {
	fr.carry = fr.carry[:0]
	for c := range fr.out {
		fr.out[c] = fr.out[c][:0]
		if fr.rs != nil {
			fr.out[c] = ToInt16(fr.rs[c].Flush(nil), fr.out[c])
		}
	}
	return fr.out
}
