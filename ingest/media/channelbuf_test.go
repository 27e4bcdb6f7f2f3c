package media

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

// TestChannelBuf: what is written comes back in order, whether it fits the
// preallocated slice, passes it, or there was none.
func TestChannelBuf(t *testing.T) {
	for _, tt := range []struct {
		name          string
		expect, total int
	}{
		{"fits", 1000, 1000},
		{"empty", 10, 0},
		{"overflows into blocks", 1000, 3*blockSamples + 17},
		{"no preallocation", 0, blockSamples + 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := make([]int16, tt.total)
			for i := range want {
				want[i] = int16(i * 7)
			}
			b := newChannelBuf(int64(tt.expect))
			for p := want; len(p) > 0; {
				n := min(len(p), 333)
				b.write(p[:n])
				p = p[n:]
			}
			if got := b.samples(); !slices.Equal(got, want) {
				t.Errorf("samples: %d back, want %d equal", len(got), len(want))
			}
		})
	}
}

// TestFFmpegDecodeAllocations: ffmpeg's output is gathered without append's
// repeated copies, which allocated several times the audio (and peaked at
// 3.8 times it in RSS): about the audio once when ffprobe tells the
// duration, at most twice when it does not.
func TestFFmpegDecodeAllocations(t *testing.T) {
	needFFmpeg(t)
	// 11 minutes: more than the 10 the decoder used to preallocate.
	flac := filepath.Join(t.TempDir(), "stereo.flac")
	gen := exec.CommandContext(t.Context(), "ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "sine=frequency=300:sample_rate=16000",
		"-ac", "2", "-t", "660", flac)
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v\n%s", err, out)
	}
	info, err := Probe(t.Context(), flac, nil)
	if err != nil {
		t.Fatal(err)
	}
	var o Options
	o.SetDefaults()
	for _, tt := range []struct {
		name     string
		duration float64
		max      float64 // allocated bytes per decoded byte
	}{
		{"duration known", info.Duration, 1.2},
		{"duration unknown", 0, 2.2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := info
			in.Duration = tt.duration
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			p, err := ffmpegDecode(t.Context(), flac, in, &o)
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			decoded := float64(2 * len(p.Channels) * len(p.Channels[0]))
			r := float64(after.TotalAlloc-before.TotalAlloc) / decoded
			t.Logf("allocated %.2f times the %.0f decoded bytes", r, decoded)
			if r > tt.max {
				t.Errorf("allocated %.2f times the %.0f decoded bytes, want at most %.1f", r, decoded, tt.max)
			}
		})
	}
}
