package media

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ffmpegDemuxers are the only demuxers ffmpeg and ffprobe may open. All are
// single-file audio or audio/video containers; playlist and list demuxers
// (hls, concat, dash, image2...) that open further files or URLs named
// inside an uploaded file are excluded.
const ffmpegDemuxers = "wav,w64,mp3,flac,ogg,mov,matroska,aac,ac3,eac3,aiff,au,caf,amr,amrnb,amrwb," +
	"wv,ape,asf,gsm,mpeg,mpegts,flv,avi,dts,tta,voc,loas,mpc,mpc8,xwma,dsf,s337m,truehd,mlp,oma,rm,nut"

// maxStderr bounds the ffmpeg/ffprobe stderr kept for an error message.
const maxStderr = 4096

// maxProbeOutput bounds ffprobe's JSON output.
const maxProbeOutput = 1 << 20

// ffprobePath returns the ffprobe binary next to ffmpeg.
func ffprobePath(ffmpeg string) string {
	if !strings.ContainsRune(ffmpeg, filepath.Separator) {
		return "ffprobe"
	}
	return filepath.Join(filepath.Dir(ffmpeg), "ffprobe")
}

// inputArgs are the options that restrict what ffmpeg/ffprobe may open.
func inputArgs(path string) []string {
	return []string{"-protocol_whitelist", "file", "-format_whitelist", ffmpegDemuxers, "-i", "file:" + path}
}

type probeJSON struct {
	Streams []struct {
		CodecName  string `json:"codec_name"`
		SampleRate string `json:"sample_rate"`
		Channels   int    `json:"channels"`
		Duration   string `json:"duration"`
	} `json:"streams"`
	Format struct {
		FormatName string `json:"format_name"`
		Duration   string `json:"duration"`
	} `json:"format"`
}

// ffprobe describes path's container and its first audio stream.
func ffprobe(ctx context.Context, path string, o *Options) (Info, error) {
	args := append([]string{"-v", "error", "-print_format", "json",
		"-show_entries", "format=format_name,duration:stream=codec_name,sample_rate,channels,duration",
		"-select_streams", "a:0"}, inputArgs(path)...)
	var out bytes.Buffer
	err := runTool(ctx, o, ffprobePath(o.FFmpeg), args, func(r io.Reader) error {
		n, err := io.Copy(&out, io.LimitReader(r, maxProbeOutput+1))
		if err == nil && n > maxProbeOutput {
			return fmt.Errorf("%w: ffprobe output over %d bytes", ErrCorrupt, maxProbeOutput)
		}
		return err
	})
	var ee *toolExitError
	if errors.As(err, &ee) {
		// ffprobe fails on input it cannot identify: not audio to us.
		return Info{}, fmt.Errorf("%w: ffprobe %s: %s", ErrUnsupported, filepath.Base(path), ee.stderr)
	}
	if err != nil {
		return Info{}, err
	}
	var pj probeJSON
	if err := json.Unmarshal(out.Bytes(), &pj); err != nil {
		return Info{}, fmt.Errorf("media: ffprobe %s: parse output: %w", filepath.Base(path), err)
	}
	if len(pj.Streams) == 0 {
		return Info{}, fmt.Errorf("%w: %s (%s) has no audio stream", ErrUnsupported, filepath.Base(path), pj.Format.FormatName)
	}
	s := pj.Streams[0]
	rate, _ := strconv.Atoi(s.SampleRate)
	if rate <= 0 || s.Channels <= 0 {
		return Info{}, fmt.Errorf("%w: %s audio stream has %d channels at %q Hz", ErrCorrupt, filepath.Base(path), s.Channels, s.SampleRate)
	}
	info := Info{
		Format:     shortFormat(pj.Format.FormatName, path),
		SampleRate: rate,
		Channels:   s.Channels,
	}
	for _, d := range []string{pj.Format.Duration, s.Duration} {
		if v, err := strconv.ParseFloat(d, 64); err == nil && v > 0 && v < 1e9 {
			info.Duration = v
			break
		}
	}
	return info, nil
}

// shortFormat names a container from ffprobe's format_name, a comma list
// for demuxers serving several ("mov,mp4,m4a,3gp,3g2,mj2",
// "matroska,webm"): the file's extension when the list names it, else the
// first name ("mov" becomes "mp4").
func shortFormat(formatName, path string) string {
	names := strings.Split(formatName, ",")
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	for _, n := range names {
		if n == ext {
			return n
		}
	}
	if names[0] == "mov" {
		return "mp4"
	}
	return names[0]
}

// ffmpegDecode runs ffmpeg to decode path's first audio stream to 16 kHz
// s16le with info.Channels channels.
func ffmpegDecode(ctx context.Context, path string, info Info, o *Options) (*PCM, error) {
	if err := o.check(info); err != nil {
		return nil, err
	}
	nch := info.Channels
	frameBytes := 2 * nch
	maxFrames, overBound := o.frameBound(nch)
	// Preallocate from the probed duration (plus a second), which check
	// has bounded: a header may overstate it, but not past
	// MaxDecodedBytes.
	expect := min(int64(info.Duration*OutputRate)+OutputRate, maxFrames)
	bufs := make([]*channelBuf, nch)
	for c := range bufs {
		bufs[c] = newChannelBuf(expect)
	}
	args := append([]string{"-nostdin", "-v", "error"}, inputArgs(path)...)
	args = append(args, "-map", "0:a:0", "-ac", strconv.Itoa(nch),
		"-f", "s16le", "-acodec", "pcm_s16le", "-ar", strconv.Itoa(OutputRate), "-")
	var frames int64
	err := runTool(ctx, o, o.FFmpeg, args, func(r io.Reader) error {
		buf := make([]byte, 64*1024/frameBytes*frameBytes)
		deint := make([]int16, 0, len(buf)/frameBytes)
		have := 0
		for {
			n, err := r.Read(buf[have:])
			have += n
			whole := have / frameBytes * frameBytes
			if frames+int64(whole/frameBytes) > maxFrames {
				return overBound
			}
			for c, b := range bufs {
				deint = deint[:0]
				for i := 2 * c; i < whole; i += frameBytes {
					deint = append(deint, int16(uint16(buf[i])|uint16(buf[i+1])<<8))
				}
				b.write(deint)
			}
			frames += int64(whole / frameBytes)
			have = copy(buf, buf[whole:have])
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
		}
	})
	var ee *toolExitError
	if errors.As(err, &ee) {
		return nil, fmt.Errorf("%w: ffmpeg %s: %s", ErrCorrupt, filepath.Base(path), ee.stderr)
	}
	if err != nil {
		return nil, err
	}
	if frames == 0 {
		return nil, fmt.Errorf("%w: %s decoded to no samples", ErrCorrupt, filepath.Base(path))
	}
	info.Duration = float64(frames) / OutputRate
	chans := make([][]int16, nch)
	for c, b := range bufs {
		chans[c] = b.samples()
	}
	return &PCM{Info: info, Channels: chans}, nil
}

// toolExitError is a non-zero exit of ffmpeg or ffprobe.
type toolExitError struct {
	err    error
	stderr string
}

func (e *toolExitError) Error() string { return e.err.Error() + ": " + e.stderr }
func (e *toolExitError) Unwrap() error { return e.err }

// runTool runs name with args under o.Timeout, passing its stdout to
// consume. If consume fails the process is killed and that error returned.
// A non-zero exit returns *toolExitError with the start of stderr; the end
// of ctx or the timeout kills the process and returns an error wrapping the
// context's error.
func runTool(ctx context.Context, o *Options, name string, args []string, consume func(io.Reader) error) error {
	tctx, cancel := context.WithTimeoutCause(ctx, o.Timeout,
		fmt.Errorf("media: %s timed out after %s: %w", filepath.Base(name), o.Timeout, context.DeadlineExceeded))
	defer cancel()
	cmd := exec.CommandContext(tctx, name, args...)
	cmd.WaitDelay = 2 * time.Second // after a kill, stop waiting for its pipes
	stderr := &boundedBuffer{max: maxStderr}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("media: %s: %w", filepath.Base(name), err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("media: start %s: %w", name, err)
	}
	cerr := consume(stdout)
	if cerr != nil {
		cancel() // kills the process
		_, _ = io.Copy(io.Discard, stdout)
	}
	werr := cmd.Wait()
	switch {
	case tctx.Err() != nil && ctx.Err() != nil:
		return fmt.Errorf("media: %s: %w", filepath.Base(name), ctx.Err())
	case tctx.Err() != nil && cerr == nil:
		return context.Cause(tctx)
	case cerr != nil:
		return cerr
	}
	var exit *exec.ExitError
	if errors.As(werr, &exit) {
		return &toolExitError{err: fmt.Errorf("media: %s exited %d", filepath.Base(name), exit.ExitCode()), stderr: stderr.summary()}
	}
	if werr != nil {
		return fmt.Errorf("media: %s: %w", filepath.Base(name), werr)
	}
	return nil
}

// boundedBuffer keeps the first max bytes written to it and drops the rest.
type boundedBuffer struct {
	buf bytes.Buffer
	max int
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// summary returns the kept stderr on one line, or "no diagnostics".
func (b *boundedBuffer) summary() string {
	s := strings.Join(strings.Fields(b.buf.String()), " ")
	if len(s) > 512 {
		s = s[:512] + "..."
	}
	if s == "" {
		return "no diagnostics"
	}
	return s
}
