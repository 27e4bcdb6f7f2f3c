package media

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// OutputRate is the sample rate of everything Decode returns.
const OutputRate = 16000

// MaxChannels is the most channels Decode accepts.
const MaxChannels = 8

// Info describes an audio file.
type Info struct {
	Format     string  // "wav", "mp3", "flac", "ogg", "m4a", "webm", "mp4", ... (container short name)
	SampleRate int     // source sample rate, Hz
	Channels   int     // source channels
	Duration   float64 // seconds; 0 when a container does not say
}

// PCM is decoded audio at 16 kHz, one []int16 per source channel.
type PCM struct {
	// Info describes the source; Decode sets Duration to the decoded length.
	Info     Info
	Channels [][]int16 // each at 16000 Hz, all the same length
}

// Probe reads a file's format, channels and duration: WAV (PCM, float,
// A-law, mu-law) in Go, anything else with ffprobe under Options.Timeout.
// Not audio or an unknown container returns ErrUnsupported; a truncated or
// garbled WAV or an empty file returns ErrCorrupt. Probe applies none of
// o's bounds on the audio: CheckLimits does. A nil o means defaults.
func Probe(ctx context.Context, path string, o *Options) (Info, error) {
	opts := o.withDefaults()
	if err := opts.Validate(); err != nil {
		return Info{}, err
	}
	f, err := os.Open(path)
	if err != nil {
		return Info{}, fmt.Errorf("media: probe: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Info{}, fmt.Errorf("media: probe: %w", err)
	}
	info, isWAV, err := ProbeWAV(f, st.Size())
	if isWAV || err != nil {
		return info, err
	}
	return ffprobe(ctx, path, &opts)
}

// ProbeWAV is Probe's WAV path over a stream: r holds a file of size bytes
// and is read only as far as its WAV header (the bytes before the data
// chunk), so a stream that is costly to read in full (a sealed blob,
// decrypted as it is read) is probed from its first bytes. isWAV false
// with a nil error means r is not a WAV this package decodes (another
// container, or a WAV encoding only ffmpeg reads): Probe the file instead.
// Errors are Probe's: ErrCorrupt for an empty stream or a truncated or
// garbled WAV, the read's error for a failed read.
func ProbeWAV(r io.Reader, size int64) (info Info, isWAV bool, err error) {
	var b [12]byte
	n, err := io.ReadFull(r, b[:])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return Info{}, false, fmt.Errorf("media: probe: %w", err)
	}
	if n == 0 {
		return Info{}, false, fmt.Errorf("%w: empty file", ErrCorrupt)
	}
	if !looksWAV(b[:n]) {
		return Info{}, false, nil
	}
	cr := &countReader{r: io.MultiReader(bytes.NewReader(b[:n]), r)}
	wf, dataLen, err := ReadWAVHeader(cr)
	if err == nil {
		dataLen, err = wavDataLen(wf, dataLen, size-cr.n)
	}
	switch {
	case errors.Is(err, ErrUnsupported):
		// A well-formed WAV in an encoding we do not decode (ADPCM, GSM,
		// MP3-in-WAV...): ffmpeg may.
		return Info{}, false, nil
	case err != nil:
		return Info{}, true, err
	}
	frames := dataLen / int64(wf.FrameSize())
	return Info{Format: "wav", SampleRate: wf.SampleRate, Channels: wf.Channels,
		Duration: float64(frames) / float64(wf.SampleRate)}, true, nil
}

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// Decode reads the whole file into 16 kHz per-channel PCM. WAV (PCM 8, 16,
// 24 and 32 bits, float 32 and 64, A-law, mu-law, any rate in
// 1000..192000 Hz, 1 to 8 channels) is decoded in Go with the Resampler;
// anything else, and WAV encodings we do not decode, is probed with ffprobe
// and decoded by
//
//	ffmpeg -nostdin -v error -protocol_whitelist file -format_whitelist ... \
//	  -i file:path -map 0:a:0 -ac N -f s16le -acodec pcm_s16le -ar 16000 -
//
// which keeps the first audio stream's channel count, reads only local files
// of audio containers (no playlists or concat lists that open other files or
// URLs), is killed when ctx ends or after Options.Timeout, and is stopped with
// ErrTooLong (or ErrTooMuchAudio) once its output passes Options.MaxDuration
// (or Options.MaxDecodedBytes). Its stderr, bounded, goes into the error.
//
// Audio outside the bounds of CheckLimits is refused with its errors
// before it is decoded when the WAV header or ffprobe tells its length:
// more than 8 channels, longer than Options.MaxDuration, or channels times
// duration over Options.MaxDecodedBytes, so that what Decode returns never
// takes more memory than that. Empty audio (no samples) returns
// ErrCorrupt. A nil o means defaults.
func Decode(ctx context.Context, path string, o *Options) (*PCM, error) {
	opts := o.withDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("media: decode: %w", err)
	}
	defer f.Close()
	isWAV, err := sniffWAV(f)
	if err != nil {
		return nil, err
	}
	if isWAV {
		p, err := decodeWAV(ctx, f, &opts)
		if err == nil || !errors.Is(err, errNeedsFFmpeg) {
			return p, err
		}
	}
	info, err := ffprobe(ctx, path, &opts)
	if err != nil {
		return nil, err
	}
	return ffmpegDecode(ctx, path, info, &opts)
}

// errNeedsFFmpeg marks a well-formed WAV whose encoding only ffmpeg decodes.
var errNeedsFFmpeg = errors.New("media: wav encoding needs ffmpeg")

// sniffWAV reports whether f starts like a RIFF/WAVE or RF64 file and
// rewinds it. An empty file returns ErrCorrupt.
func sniffWAV(f *os.File) (bool, error) {
	var b [12]byte
	n, err := io.ReadFull(f, b[:])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("media: read %s: %w", f.Name(), err)
	}
	if n == 0 {
		return false, fmt.Errorf("%w: empty file", ErrCorrupt)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return false, fmt.Errorf("media: seek %s: %w", f.Name(), err)
	}
	return looksWAV(b[:n]), nil
}

// looksWAV reports whether b, a file's first (up to) 12 bytes, starts like
// a RIFF/WAVE or RF64 file.
func looksWAV(b []byte) bool {
	riff := string(b[:min(len(b), 4)])
	if riff == "RIFF" || riff == "RF64" {
		// Too short to say WAVE is still a broken RIFF file, not another format.
		return len(b) < 12 || string(b[8:12]) == "WAVE"
	}
	return false
}

// wavData reads the WAV header from the start of f and returns the format
// and the usable data length: the declared length (ErrCorrupt when the file
// is shorter), or the rest of the file for a streaming header, rounded down
// to whole frames. f is left at the first data byte.
func wavData(f namedSeeker) (Format, int64, error) {
	wf, n, err := ReadWAVHeader(f)
	if err != nil {
		return wf, 0, err
	}
	pos, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return wf, 0, fmt.Errorf("media: seek %s: %w", f.Name(), err)
	}
	end, err := f.Seek(0, io.SeekEnd)
	if err == nil {
		_, err = f.Seek(pos, io.SeekStart)
	}
	if err != nil {
		return wf, 0, fmt.Errorf("media: seek %s: %w", f.Name(), err)
	}
	n, err = wavDataLen(wf, n, end-pos)
	return wf, n, err
}

// wavDataLen is the data chunk's usable length in whole frames: n as its
// header says (-1 for unknown: to the end), rest the bytes the file has
// after the header.
func wavDataLen(wf Format, n, rest int64) (int64, error) {
	switch {
	case n < 0:
		n = rest
	case n > rest:
		return 0, fmt.Errorf("%w: data chunk says %d bytes, file has %d", ErrCorrupt, n, rest)
	}
	fs := int64(wf.FrameSize())
	return n / fs * fs, nil
}

// namedSeeker is a file wavData reads: an *os.File, a sealed spool.
type namedSeeker interface {
	io.ReadSeeker
	Name() string
}

// wavChunkFrames is how many frames decodeWAV converts at a time; a chunk of
// 8 channels of 64-bit float is 4 MiB.
const wavChunkFrames = 1 << 16

// decodeWAV decodes a WAV file in Go. A well-formed WAV with an encoding we
// do not decode returns an error wrapping errNeedsFFmpeg.
func decodeWAV(ctx context.Context, f *os.File, o *Options) (*PCM, error) {
	wf, dataLen, err := wavData(f)
	if errors.Is(err, ErrUnsupported) && wf.Channels == 0 {
		return nil, err // not WAVE after all
	}
	if errors.Is(err, ErrUnsupported) && wf.Encoding == 0 {
		return nil, fmt.Errorf("%w: %w", errNeedsFFmpeg, err)
	}
	if err != nil {
		return nil, err
	}
	frames := dataLen / int64(wf.FrameSize())
	if err := o.check(Info{Channels: wf.Channels, Duration: float64(frames) / float64(wf.SampleRate)}); err != nil {
		return nil, err
	}
	if frames == 0 {
		return nil, fmt.Errorf("%w: no samples", ErrCorrupt)
	}
	outLen := int((frames*OutputRate + int64(wf.SampleRate) - 1) / int64(wf.SampleRate))
	chans := make([]*channelDecoder, wf.Channels)
	for c := range chans {
		rs, err := NewResampler(wf.SampleRate, OutputRate)
		if err != nil {
			return nil, err
		}
		chans[c] = &channelDecoder{rs: rs, out: make([]int16, 0, outLen)}
	}

	raw := make([]byte, wavChunkFrames*wf.FrameSize())
	deint := make([][]float32, wf.Channels)
	for left := dataLen; left > 0; {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("media: decode %s: %w", f.Name(), err)
		}
		b := raw[:min(int64(len(raw)), left)]
		if _, err := io.ReadFull(f, b); err != nil {
			return nil, fmt.Errorf("%w: read %s: %w", ErrCorrupt, f.Name(), err)
		}
		left -= int64(len(b))
		for c := range deint {
			deint[c] = deint[c][:0]
		}
		if deint, err = DecodeInterleaved(wf, b, deint); err != nil {
			return nil, err
		}
		eachChannel(chans, func(c int, d *channelDecoder) { d.push(deint[c], false) })
	}
	eachChannel(chans, func(_ int, d *channelDecoder) { d.push(nil, true) })

	p := &PCM{
		Info:     Info{Format: "wav", SampleRate: wf.SampleRate, Channels: wf.Channels},
		Channels: make([][]int16, wf.Channels),
	}
	for c, d := range chans {
		p.Channels[c] = d.out
	}
	p.Info.Duration = float64(len(p.Channels[0])) / OutputRate
	return p, nil
}

// channelDecoder resamples one channel to 16 kHz int16.
type channelDecoder struct {
	rs  *Resampler
	tmp []float32
	out []int16
}

func (d *channelDecoder) push(in []float32, flush bool) {
	if flush {
		d.tmp = d.rs.Flush(d.tmp[:0])
	} else {
		d.tmp = d.rs.Process(in, d.tmp[:0])
	}
	d.out = ToInt16(d.tmp, d.out)
}

// eachChannel runs fn for every channel, in parallel when there is more
// than one (the resampling is CPU-bound); every goroutine has ended when it
// returns.
func eachChannel(chans []*channelDecoder, fn func(int, *channelDecoder)) {
	if len(chans) == 1 {
		fn(0, chans[0])
		return
	}
	var wg sync.WaitGroup
	for c, d := range chans {
		wg.Go(func() { fn(c, d) })
	}
	wg.Wait()
}
