package media

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/zaf/g711"
)

// Span is a stretch of audio, in seconds from its start.
type Span struct {
	Start, End float64
}

// Fill is what Blank writes over a span.
type Fill int

// The fills of Blank.
const (
	// FillSilence is digital silence of the file's encoding (the sample
	// nearest 0: 0xFF in µ-law, 0xD5 in A-law, 0x80 in 8-bit PCM).
	FillSilence Fill = iota + 1
	// FillTone is a 1 kHz sine at ToneLevel of full scale, its phase
	// counted from the file's first frame.
	FillTone
)

// ToneHz and ToneLevel are FillTone's frequency and amplitude (-20 dBFS).
const (
	ToneHz    = 1000
	ToneLevel = 0.1
)

// MaxSpans bounds the spans one Blank call takes (a job's redacted
// entities are bounded by its words; this keeps the work bounded whatever
// the caller).
const MaxSpans = 100000

// blankChunkFrames is how many frames Blank writes at a time.
const blankChunkFrames = 1 << 14

// BlankFile is a WAV file Blank changes in place: an *os.File, or a
// sealed local recording (store/sealed's Spool) that reseals what changes.
type BlankFile interface {
	io.ReadSeeker
	io.WriterAt
	Sync() error
	Name() string
}

// Blank overwrites, in place, every channel of the WAV file f (linear PCM,
// A-law or µ-law: what AppendWAVHeader writes; float is ErrUnsupported) over each span with fill, in
// the file's own encoding and rate, and syncs f. Spans are clipped to the
// audio (a span past its end changes nothing); the file's length and
// header never change. It writes at most blankChunkFrames frames at a
// time, so its memory does not grow with the spans' length. More than
// MaxSpans spans is an error, before anything is written.
func Blank(f BlankFile, spans []Span, fill Fill) error {
	if len(spans) > MaxSpans {
		return fmt.Errorf("media: blank: %d spans > limit %d", len(spans), MaxSpans)
	}
	if fill != FillSilence && fill != FillTone {
		return fmt.Errorf("media: blank: unknown fill %d", fill)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("media: blank %s: %w", f.Name(), err)
	}
	wf, dataLen, err := wavData(f)
	if err != nil {
		return err
	}
	dataAt, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return fmt.Errorf("media: blank %s: %w", f.Name(), err)
	}
	if wf.Encoding == Float {
		return fmt.Errorf("media: blank %s: %w: float samples", f.Name(), ErrUnsupported)
	}
	fs := int64(wf.FrameSize())
	frames := dataLen / fs
	rate := float64(wf.SampleRate)
	buf := make([]byte, blankChunkFrames*fs)
	for _, sp := range spans {
		if !(sp.End > sp.Start) { // NaN too
			continue
		}
		from := min(max(int64(math.Floor(sp.Start*rate)), 0), frames)
		to := min(max(int64(math.Ceil(sp.End*rate)), 0), frames)
		for at := from; at < to; {
			n := min(to-at, blankChunkFrames)
			b := buf[:n*fs]
			fillFrames(b, wf, at, fill)
			if _, err := f.WriteAt(b, dataAt+at*fs); err != nil {
				return fmt.Errorf("media: blank %s: %w", f.Name(), err)
			}
			at += n
		}
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("media: blank %s: %w", f.Name(), err)
	}
	return nil
}

// fillFrames writes len(b)/FrameSize frames of fill in format wf into b,
// the first being frame first of the file (the tone's phase).
func fillFrames(b []byte, wf Format, first int64, fill Fill) {
	bps := wf.BitDepth / 8
	fs := bps * wf.Channels
	sample := make([]byte, bps)
	for i := 0; i*fs < len(b); i++ {
		v := 0.0
		if fill == FillTone {
			v = ToneLevel * math.Sin(2*math.Pi*ToneHz*float64(first+int64(i))/float64(wf.SampleRate))
		}
		encodeSample(sample, wf, v)
		for c := range wf.Channels {
			copy(b[i*fs+c*bps:], sample)
		}
	}
}

// encodeSample writes v (in [-1, 1]) as one sample of wf's encoding.
func encodeSample(dst []byte, wf Format, v float64) {
	i16 := int16(math.Round(v * 32767))
	le := binary.LittleEndian
	switch {
	case wf.Encoding == MuLaw:
		dst[0] = g711.EncodeUlawFrame(i16)
		if v == 0 {
			dst[0] = 0xff
		}
	case wf.Encoding == ALaw:
		dst[0] = g711.EncodeAlawFrame(i16)
		if v == 0 {
			dst[0] = 0xd5
		}
	case wf.BitDepth == 8:
		dst[0] = byte(int(i16>>8) + 128)
	case wf.BitDepth == 16:
		le.PutUint16(dst, uint16(i16))
	case wf.BitDepth == 24:
		x := int32(math.Round(v * 8388607))
		dst[0], dst[1], dst[2] = byte(x), byte(x>>8), byte(x>>16)
	default:
		le.PutUint32(dst, uint32(int32(math.Round(v*2147483647))))
	}
}

// PadSpans returns spans widened by guard seconds on each side (never
// before 0), sorted, with overlapping ones joined.
func PadSpans(spans []Span, guard float64) []Span {
	out := make([]Span, 0, len(spans))
	for _, s := range spans {
		if s.End > s.Start {
			out = append(out, Span{max(s.Start-guard, 0), s.End + guard})
		}
	}
	slices.SortFunc(out, func(a, b Span) int {
		switch {
		case a.Start < b.Start:
			return -1
		case a.Start > b.Start:
			return 1
		}
		return 0
	})
	var joined []Span
	for _, s := range out {
		if n := len(joined); n > 0 && s.Start <= joined[n-1].End {
			joined[n-1].End = max(joined[n-1].End, s.End)
			continue
		}
		joined = append(joined, s)
	}
	return joined
}

// WriteWAV writes channels (16 kHz samples, every channel the same length,
// as Decode returns them) to w as a 16-bit PCM WAV at OutputRate,
// interleaved, a block of frames at a time: its memory does not grow with
// the audio. It returns the bytes written.
func WriteWAV(w io.Writer, channels [][]int16) (int64, error) {
	if len(channels) == 0 || len(channels) > MaxFormatChannels {
		return 0, fmt.Errorf("media: write wav: %d channels: %w", len(channels), ErrUnsupported)
	}
	frames := len(channels[0])
	for _, c := range channels {
		if len(c) != frames {
			return 0, fmt.Errorf("media: write wav: channels of %d and %d samples", frames, len(c))
		}
	}
	f := Format{Encoding: LinearPCM, BitDepth: 16, SampleRate: OutputRate, Channels: len(channels)}
	n, err := w.Write(AppendWAVHeader(nil, f, int64(frames*f.FrameSize())))
	total := int64(n)
	if err != nil {
		return total, fmt.Errorf("media: write wav: %w", err)
	}
	buf := make([]byte, 0, blankChunkFrames*f.FrameSize())
	for at := 0; at < frames; at += blankChunkFrames {
		buf = buf[:0]
		for i := at; i < min(at+blankChunkFrames, frames); i++ {
			for _, c := range channels {
				buf = binary.LittleEndian.AppendUint16(buf, uint16(c[i]))
			}
		}
		n, err := w.Write(buf)
		total += int64(n)
		if err != nil {
			return total, fmt.Errorf("media: write wav: %w", err)
		}
	}
	return total, nil
}
