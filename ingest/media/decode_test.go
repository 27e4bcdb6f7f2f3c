package media

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

const speechDir = "../../../shared/testdata/speech"

type speechFile struct {
	path     string
	duration float64
	channels int
}

// speechFiles reads the shared speech manifest.
func speechFiles(t *testing.T) []speechFile {
	t.Helper()
	dir := speechDir
	if _, err := os.Stat(dir); err != nil {
		dir = "/work/shared/testdata/speech"
	}
	f, err := os.Open(filepath.Join(dir, "manifest.tsv"))
	if err != nil {
		t.Fatalf("speech test data: %v", err)
	}
	defer f.Close()
	var out []speechFile
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) < 5 || cols[0] == "file" {
			continue
		}
		d, err := strconv.ParseFloat(cols[1], 64)
		if err != nil {
			t.Fatalf("manifest duration %q: %v", cols[1], err)
		}
		ch := 1
		if strings.Contains(cols[8], "channels=2") {
			ch = 2
		}
		out = append(out, speechFile{path: filepath.Join(dir, cols[0]), duration: d, channels: ch})
	}
	if len(out) == 0 {
		t.Fatal("speech manifest lists no files")
	}
	return out
}

func speechPath(t *testing.T, name string) string {
	t.Helper()
	for _, f := range speechFiles(t) {
		if filepath.Base(f.path) == name {
			return f.path
		}
	}
	t.Fatalf("no speech file %s", name)
	return ""
}

// rawSamples returns a 16-bit WAV's samples as written, de-interleaved.
func rawSamples(t *testing.T, path string) [][]int16 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	wf, _, err := ReadWAVHeader(f)
	if err != nil || wf.BitDepth != 16 {
		t.Fatalf("%s: %+v %v", path, wf, err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]int16, wf.Channels)
	for i := 0; i+2*wf.Channels <= len(data); i += 2 * wf.Channels {
		for c := range out {
			out[c] = append(out[c], int16(binary.LittleEndian.Uint16(data[i+2*c:])))
		}
	}
	return out
}

// correlation is the normalised cross-correlation of a and b at lag 0 over
// their common length.
func correlation(a, b []int16) float64 {
	n := min(len(a), len(b))
	var ab, aa, bb float64
	for i := range n {
		x, y := float64(a[i]), float64(b[i])
		ab += x * y
		aa += x * x
		bb += y * y
	}
	return ab / math.Sqrt(aa*bb+1e-9)
}

// bestCorrelation is the largest correlation of a and b over lags within
// ±maxLag samples (codecs add a little delay), measured on a 1 s window
// from the middle of b.
func bestCorrelation(a, b []int16, maxLag int) float64 {
	if mid := len(b) / 2; mid > 8000+maxLag && len(a) > mid+8000+maxLag {
		a, b = a[mid-8000-maxLag:mid+8000+maxLag], b[mid-8000:mid+8000]
		return bestCorrelationAt(a, b, maxLag)
	}
	return bestCorrelationAt(a, b, 0)
}

// bestCorrelationAt slides b over a, where a has lag extra samples each side.
func bestCorrelationAt(a, b []int16, lag int) float64 {
	best := -1.0
	for off := 0; off <= 2*lag && off+len(b) <= len(a); off++ {
		best = math.Max(best, correlation(a[off:off+len(b)], b))
	}
	return best
}

// TestDecodeSpeech decodes every shared speech file: the duration matches
// the manifest, 16 kHz 16-bit input comes out sample for sample, and the
// stereo file yields two different channels.
func TestDecodeSpeech(t *testing.T) {
	for _, sf := range speechFiles(t) {
		t.Run(filepath.Base(sf.path), func(t *testing.T) {
			info, err := Probe(t.Context(), sf.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if info.Format != "wav" || info.SampleRate != 16000 || info.Channels != sf.channels || math.Abs(info.Duration-sf.duration) > 0.006 {
				t.Fatalf("Probe = %+v, want wav 16000 Hz, %d channels, %.2f s", info, sf.channels, sf.duration)
			}
			p, err := Decode(t.Context(), sf.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Channels) != sf.channels {
				t.Fatalf("%d channels, want %d", len(p.Channels), sf.channels)
			}
			if d := float64(len(p.Channels[0])) / 16000; math.Abs(d-sf.duration) > 0.006 || math.Abs(p.Info.Duration-d) > 1e-9 {
				t.Fatalf("decoded %.3f s (Info %.3f), manifest says %.2f", d, p.Info.Duration, sf.duration)
			}
			raw := rawSamples(t, sf.path)
			for c := range raw {
				for i := range raw[c] {
					if p.Channels[c][i] != raw[c][i] {
						t.Fatalf("channel %d sample %d = %d, file has %d", c, i, p.Channels[c][i], raw[c][i])
					}
				}
			}
			if sf.channels == 2 {
				if c := correlation(p.Channels[0], p.Channels[1]); c > 0.5 {
					t.Fatalf("stereo channels correlate at %.2f; want two different speakers", c)
				}
			}
		})
	}
}

func needFFmpeg(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"ffmpeg", "ffprobe"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed: %v", tool, err)
		}
	}
}

// ffmpegMake converts src with ffmpeg into dir/name using args.
func ffmpegMake(t *testing.T, src, name string, args ...string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), name)
	cmd := exec.CommandContext(t.Context(), "ffmpeg", append(append([]string{"-nostdin", "-v", "error", "-i", src}, args...), dst)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg %s: %v\n%s", name, err, out)
	}
	return dst
}

// TestDecodeConverted decodes speech converted by ffmpeg to other rates,
// encodings and containers, and compares it with the original 16 kHz
// recording: same length and channels, and the same waveform (correlation).
// The WAV variants take the Go path, the rest the ffmpeg path.
func TestDecodeConverted(t *testing.T) {
	needFFmpeg(t)
	mono := speechPath(t, "ls-test-clean-1089-134691-0001.wav")
	stereo := speechPath(t, "stereo-two-speaker-librispeech.wav")
	tests := []struct {
		name    string
		src     string
		file    string
		args    []string
		format  string
		rate    int
		minCorr float64 // lossy or band-limited paths correlate less
		lenTol  float64 // seconds
	}{
		{"wav 44.1k stereo s16", stereo, "a.wav", []string{"-ar", "44100"}, "wav", 44100, 0.99, 0.001},
		{"wav 48k f32", mono, "a.wav", []string{"-ar", "48000", "-c:a", "pcm_f32le"}, "wav", 48000, 0.99, 0.001},
		{"wav 22.05k s24 extensible", mono, "a.wav", []string{"-ar", "22050", "-c:a", "pcm_s24le", "-rf64", "never", "-write_bext", "1"}, "wav", 22050, 0.99, 0.001},
		{"wav 8k mulaw", mono, "a.wav", []string{"-ar", "8000", "-c:a", "pcm_mulaw"}, "wav", 8000, 0.9, 0.001},
		{"wav 8k alaw stereo", stereo, "a.wav", []string{"-ar", "8000", "-c:a", "pcm_alaw"}, "wav", 8000, 0.9, 0.001},
		{"wav 11.025k u8", mono, "a.wav", []string{"-ar", "11025", "-c:a", "pcm_u8"}, "wav", 11025, 0.9, 0.001},
		{"wav adpcm via ffmpeg", mono, "a.wav", []string{"-c:a", "adpcm_ms"}, "wav", 16000, 0.9, 0.06}, // block padding
		{"flac", mono, "a.flac", nil, "flac", 16000, 0.999, 0.001},
		{"flac stereo 44.1k", stereo, "a.flac", []string{"-ar", "44100"}, "flac", 44100, 0.99, 0.001},
		{"mp3", mono, "a.mp3", []string{"-c:a", "libmp3lame", "-b:a", "64k"}, "mp3", 16000, 0.9, 0.08},
		{"ogg vorbis", mono, "a.ogg", []string{"-c:a", "libvorbis"}, "ogg", 16000, 0.9, 0.02},
		{"opus in ogg stereo", stereo, "a.opus", []string{"-c:a", "libopus"}, "ogg", 48000, 0.8, 0.03},
		{"m4a aac", mono, "a.m4a", []string{"-c:a", "aac", "-b:a", "64k"}, "m4a", 16000, 0.9, 0.08},
		{"webm opus", mono, "a.webm", []string{"-c:a", "libopus"}, "webm", 48000, 0.8, 0.03},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := ffmpegMake(t, tt.src, tt.file, tt.args...)
			want := rawSamples(t, tt.src)
			info, err := Probe(t.Context(), path, nil)
			if err != nil {
				t.Fatalf("Probe: %v", err)
			}
			wantDur := float64(len(want[0])) / 16000
			if info.Format != tt.format || info.SampleRate != tt.rate || info.Channels != len(want) || math.Abs(info.Duration-wantDur) > tt.lenTol+0.03 {
				t.Fatalf("Probe = %+v, want %s at %d Hz, %d channels, %.2f s", info, tt.format, tt.rate, len(want), wantDur)
			}
			p, err := Decode(t.Context(), path, nil)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if len(p.Channels) != len(want) {
				t.Fatalf("%d channels, want %d", len(p.Channels), len(want))
			}
			for c := range want {
				got := p.Channels[c]
				if d := float64(len(got)-len(want[c])) / 16000; math.Abs(d) > tt.lenTol {
					t.Errorf("channel %d: %d samples, original %d (%.3f s off)", c, len(got), len(want[c]), d)
				}
				if corr := bestCorrelation(got, want[c], 1200); corr < tt.minCorr {
					t.Errorf("channel %d: correlation with the original %.4f < %.4f", c, corr, tt.minCorr)
				}
			}
			if len(want) == 2 {
				if c := correlation(p.Channels[0], p.Channels[1]); c > 0.5 {
					t.Errorf("channels correlate at %.2f; the split mixed them", c)
				}
			}
		})
	}
}

// writeFile writes b to a new file in a test directory.
func writeFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDecodeBad(t *testing.T) {
	needFFmpeg(t)
	f16 := Format{LinearPCM, 16, 16000, 1}
	good := makeWAV(t, f16, encodeSamples(t, f16, tones(1, 16000, 1600, 0.5)), wavOpts{})
	nine := Format{LinearPCM, 16, 16000, 9}
	src := speechPath(t, "pocketsphinx-goforward.wav")
	mp3 := ffmpegMake(t, src, "a.mp3")
	mp3Bytes, err := os.ReadFile(mp3)
	if err != nil {
		t.Fatal(err)
	}
	playlist := "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\n" + mp3 + "\n#EXT-X-ENDLIST\n"
	concat := "ffconcat version 1.0\nfile '" + mp3 + "'\n"
	tests := []struct {
		name    string
		file    []byte
		want    error
		probeOK bool // Probe describes the file; only Decode refuses it
	}{
		{"empty file", nil, ErrCorrupt, false},
		{"text", []byte("hello, this is not audio at all\n"), ErrUnsupported, false},
		{"random bytes", randomBytes(4096), ErrUnsupported, false},
		{"wav header only", good[:44], ErrCorrupt, false},
		{"wav truncated header", good[:30], ErrCorrupt, false},
		{"wav truncated data", good[:len(good)-1000], ErrCorrupt, false},
		{"wav no samples", makeWAV(t, f16, nil, wavOpts{}), ErrCorrupt, true},
		{"wav 9 channels", makeWAV(t, nine, encodeSamples(t, nine, tones(9, 16000, 100, 0.5)), wavOpts{}), ErrUnsupported, true},
		{"wav 500 Hz", makeWAV(t, Format{LinearPCM, 16, 500, 1}, make([]byte, 200), wavOpts{}), ErrUnsupported, true},
		{"wav garbled fmt", append(append([]byte(nil), good[:20]...), randomBytes(100)...), ErrCorrupt, false},
		{"mp3 first bytes only", mp3Bytes[:min(len(mp3Bytes), 40)], ErrUnsupported, false},
		{"hls playlist", []byte(playlist), ErrUnsupported, false},
		{"concat list", []byte(concat), ErrUnsupported, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, "in.bin", tt.file)
			if tt.name == "hls playlist" {
				path = writeFile(t, "in.m3u8", tt.file)
			}
			p, err := Decode(t.Context(), path, nil)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Decode err = %v (pcm %v), want %v", err, p != nil, tt.want)
			}
			_, err = Probe(t.Context(), path, nil)
			if tt.probeOK && err != nil {
				t.Fatalf("Probe err = %v, want nil", err)
			}
			if !tt.probeOK && !errors.Is(err, tt.want) {
				t.Fatalf("Probe err = %v, want %v", err, tt.want)
			}
		})
	}
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

func TestDecodeTooLong(t *testing.T) {
	needFFmpeg(t)
	src := speechPath(t, "ls-test-clean-1089-134691-0001.wav") // 5.42 s
	stream := Format{LinearPCM, 16, 16000, 1}
	streamWAV := makeWAV(t, stream, encodeSamples(t, stream, tones(1, 16000, 16000*3, 0.5)), wavOpts{dataSize: -1})
	tests := []struct {
		name string
		path string
	}{
		{"wav", src},
		{"streaming wav", writeFile(t, "s.wav", streamWAV)},
		{"flac", ffmpegMake(t, src, "a.flac")},
		{"raw mp3 stream without duration", ffmpegMake(t, src, "a.mp3", "-write_xing", "0")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(t.Context(), tt.path, &Options{MaxDuration: 2 * time.Second})
			if !errors.Is(err, ErrTooLong) {
				t.Fatalf("err = %v, want ErrTooLong", err)
			}
			if _, err := Decode(t.Context(), tt.path, &Options{MaxDuration: 10 * time.Second}); err != nil {
				t.Fatalf("10 s limit: %v", err)
			}
		})
	}
}

// TestDecodeOutputBound checks the bound on ffmpeg's output itself, for
// containers whose duration ffprobe cannot know in advance.
func TestDecodeOutputBound(t *testing.T) {
	needFFmpeg(t)
	src := speechPath(t, "ls-test-clean-1089-134691-0001.wav")
	path := ffmpegMake(t, src, "a.flac")
	info, err := Probe(t.Context(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	info.Duration = 0 // as if the container did not say
	o := Options{MaxDuration: 2 * time.Second}
	o.SetDefaults()
	if _, err := ffmpegDecode(t.Context(), path, info, &o); !errors.Is(err, ErrTooLong) {
		t.Fatalf("err = %v, want ErrTooLong", err)
	}
}

func TestDecodeCancel(t *testing.T) {
	needFFmpeg(t)
	path := ffmpegMake(t, speechPath(t, "ljspeech-LJ001-0007-to-0016-long.wav"), "a.flac")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Decode(ctx, path, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled ctx: err = %v, want context.Canceled", err)
	}
	_, err := Decode(t.Context(), path, &Options{Timeout: time.Nanosecond})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("1ns timeout: err = %v, want context.DeadlineExceeded", err)
	}
	ctx, cancel = context.WithCancel(t.Context())
	cancel()
	wav := speechPath(t, "ljspeech-LJ001-0007-to-0016-long.wav")
	if _, err := Decode(ctx, wav, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled ctx, wav: err = %v, want context.Canceled", err)
	}
}

func TestDecodeMissingFFmpeg(t *testing.T) {
	path := writeFile(t, "a.mp3", randomBytes(1000))
	_, err := Decode(t.Context(), path, &Options{FFmpeg: filepath.Join(t.TempDir(), "no-ffmpeg")})
	if err == nil || errors.Is(err, ErrUnsupported) || errors.Is(err, ErrCorrupt) {
		t.Fatalf("err = %v, want a plain start error (operator problem, not bad audio)", err)
	}
	if _, err := Decode(t.Context(), "/nonexistent/a.wav", nil); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: err = %v, want os.ErrNotExist", err)
	}
}

func TestShortFormat(t *testing.T) {
	tests := []struct{ name, path, want string }{
		{"mov,mp4,m4a,3gp,3g2,mj2", "x.m4a", "m4a"},
		{"mov,mp4,m4a,3gp,3g2,mj2", "x.MP4", "mp4"},
		{"mov,mp4,m4a,3gp,3g2,mj2", "upload", "mp4"},
		{"matroska,webm", "a.webm", "webm"},
		{"matroska,webm", "a.mkv", "matroska"},
		{"ogg", "a.opus", "ogg"},
		{"mp3", "a.bin", "mp3"},
	}
	for _, tt := range tests {
		if got := shortFormat(tt.name, tt.path); got != tt.want {
			t.Errorf("shortFormat(%q, %q) = %q, want %q", tt.name, tt.path, got, tt.want)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	if err := (&Options{MaxDuration: -1, Timeout: -1, MaxDecodedBytes: -1}).Validate(); err == nil ||
		!strings.Contains(err.Error(), "max_duration") || !strings.Contains(err.Error(), "timeout") ||
		!strings.Contains(err.Error(), "max_decoded_bytes") {
		t.Fatalf("Validate = %v, want every field named", err)
	}
	var o Options
	o.SetDefaults()
	if o != (Options{FFmpeg: "ffmpeg", MaxDuration: 4 * time.Hour, MaxDecodedBytes: 921_600_000, Timeout: 10 * time.Minute}) {
		t.Fatalf("defaults = %+v", o)
	}
	if _, err := Decode(t.Context(), "x", &Options{Timeout: -1}); err == nil {
		t.Fatal("Decode accepted invalid options")
	}
}

// BenchmarkDecodeWAV44kStereo decodes a 2-minute 44.1 kHz stereo WAV.
func BenchmarkDecodeWAV44kStereo(b *testing.B) {
	const secs = 120
	f := Format{LinearPCM, 16, 44100, 2}
	path := filepath.Join(b.TempDir(), "long.wav")
	if err := os.WriteFile(path, makeWAV(b, f, encodeSamples(b, f, tones(2, 44100, 44100*secs, 0.5)), wavOpts{}), 0o600); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		p, err := Decode(context.Background(), path, nil)
		if err != nil {
			b.Fatal(err)
		}
		if len(p.Channels[0]) != 16000*secs {
			b.Fatalf("%d samples", len(p.Channels[0]))
		}
	}
}

// TestProbeWAV: ProbeWAV over a stream describes each real speech WAV as
// the manifest does, and a WAV whose header leaves its length open to the
// end of the stream, reading the header only; refuses broken WAVs with
// ErrCorrupt; leaves what only ffmpeg reads (another container, a WAV
// encoding Decode leaves to ffmpeg) to ffprobe, saying so with no error.
// Probe's WAV path is ProbeWAV, so TestDecodeBad covers it through files.
func TestProbeWAV(t *testing.T) {
	needFFmpeg(t)
	type want struct {
		info   Info
		isWAV  bool
		err    error
		approx bool // duration within 6 ms (the manifest's rounding)
	}
	type tcase struct {
		name string
		b    []byte
		want want
	}
	read := func(path string) []byte {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var cases []tcase
	for _, sf := range speechFiles(t) {
		cases = append(cases, tcase{filepath.Base(sf.path), read(sf.path),
			want{Info{"wav", 16000, sf.channels, sf.duration}, true, nil, true}})
	}
	f16 := Format{LinearPCM, 16, 16000, 1}
	tone := encodeSamples(t, f16, tones(1, 16000, 1600, 0.5))
	good := makeWAV(t, f16, tone, wavOpts{})
	nine := Format{LinearPCM, 16, 16000, 9}
	mono := speechPath(t, "ls-test-clean-1089-134691-0001.wav")
	monoLen := float64(len(rawSamples(t, mono)[0])) / 16000
	notWAV := want{}
	corrupt := want{isWAV: true, err: ErrCorrupt}
	cases = append(cases,
		tcase{"length to the end", append(AppendWAVHeader(nil, f16, -1), tone...), want{Info{"wav", 16000, 1, 0.1}, true, nil, false}},
		tcase{"s24 22.05k extensible", read(ffmpegMake(t, mono, "s24.wav", "-ar", "22050", "-c:a", "pcm_s24le", "-rf64", "never", "-write_bext", "1")),
			want{Info{"wav", 22050, 1, monoLen}, true, nil, true}},
		tcase{"9 channels", makeWAV(t, nine, encodeSamples(t, nine, tones(9, 16000, 100, 0.5)), wavOpts{}), want{Info{"wav", 16000, 9, 100.0 / 16000}, true, nil, false}},
		tcase{"no samples", makeWAV(t, f16, nil, wavOpts{}), want{Info{"wav", 16000, 1, 0}, true, nil, false}},
		tcase{"empty", nil, want{err: ErrCorrupt}},
		tcase{"header only", good[:44], corrupt},
		tcase{"truncated header", good[:30], corrupt},
		tcase{"truncated data", good[:len(good)-1000], corrupt},
		tcase{"garbled fmt", append(append([]byte(nil), good[:20]...), randomBytes(100)...), corrupt},
		tcase{"RIFF cut short", []byte("RIFF\x00\x00"), corrupt},
		tcase{"text", []byte("hello, this is not audio at all\n"), notWAV},
		tcase{"random bytes", randomBytes(4096), notWAV},
		tcase{"flac", read(ffmpegMake(t, mono, "a.flac")), notWAV},
		tcase{"adpcm wav", read(ffmpegMake(t, mono, "adpcm.wav", "-c:a", "adpcm_ms")), notWAV},
	)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &countReader{r: bytes.NewReader(tc.b)}
			info, isWAV, err := ProbeWAV(r, int64(len(tc.b)))
			w := tc.want
			if isWAV != w.isWAV || !errors.Is(err, w.err) || (w.err == nil) != (err == nil) {
				t.Fatalf("ProbeWAV = %+v, %v, %v; want isWAV %v, error %v", info, isWAV, err, w.isWAV, w.err)
			}
			d := info.Duration - w.info.Duration
			if w.approx && math.Abs(d) <= 0.006 {
				info.Duration = w.info.Duration
			}
			if info != w.info {
				t.Fatalf("ProbeWAV = %+v, want %+v", info, w.info)
			}
			if isWAV && len(tc.b) > 8192 && r.n > 4096 {
				t.Errorf("ProbeWAV read %d of %d bytes, want the header only", r.n, len(tc.b))
			}
		})
	}
}
