package media

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// TestBlank: over each span every channel becomes silence (or the tone)
// in the file's own encoding, the rest of the file and its header stay as
// they were, and a span past the end changes nothing beyond it.
func TestBlank(t *testing.T) {
	formats := []Format{
		{Encoding: LinearPCM, BitDepth: 16, SampleRate: 16000, Channels: 2},
		{Encoding: LinearPCM, BitDepth: 8, SampleRate: 8000, Channels: 1},
		{Encoding: LinearPCM, BitDepth: 24, SampleRate: 8000, Channels: 1},
		{Encoding: LinearPCM, BitDepth: 32, SampleRate: 8000, Channels: 1},
		{Encoding: MuLaw, BitDepth: 8, SampleRate: 8000, Channels: 2},
		{Encoding: ALaw, BitDepth: 8, SampleRate: 8000, Channels: 1},
	}
	for _, wf := range formats {
		for _, fill := range []Fill{FillSilence, FillTone} {
			t.Run(wf.Encoding.String()+"/"+map[Fill]string{FillSilence: "silence", FillTone: "tone"}[fill], func(t *testing.T) {
				frames := wf.SampleRate // one second
				audio := make([]byte, frames*wf.FrameSize())
				for i := range audio {
					audio[i] = byte(i*37 + 11) // loud, never constant
				}
				orig := append(AppendWAVHeader(nil, wf, int64(len(audio))), audio...)
				path, f := openTemp(t, orig)
				if err := Blank(f, []Span{{0.25, 0.5}, {0.9, 3}}, fill); err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(orig) || !bytes.Equal(got[:WAVHeaderSize], orig[:WAVHeaderSize]) {
					t.Fatalf("file changed size or header: %d bytes, want %d", len(got), len(orig))
				}
				dec, err := DecodeInterleaved(wf, got[WAVHeaderSize:], nil)
				if err != nil {
					t.Fatal(err)
				}
				fs := wf.FrameSize()
				in := func(i int) bool {
					s := float64(i) / float64(wf.SampleRate)
					return s >= 0.25 && s < 0.5 || s >= 0.9
				}
				for c := range dec {
					var sum float64
					n := 0
					for i, v := range dec[c] {
						if !in(i) {
							b := WAVHeaderSize + i*fs
							if !bytes.Equal(got[b:b+fs], orig[b:b+fs]) {
								t.Fatalf("channel %d frame %d outside the spans changed", c, i)
							}
							continue
						}
						sum += float64(v) * float64(v)
						n++
					}
					rms := math.Sqrt(sum / float64(n))
					want, tol := 0.0, 0.01
					if fill == FillTone {
						want, tol = ToneLevel/math.Sqrt2, 0.01
					}
					if math.Abs(rms-want) > tol {
						t.Errorf("channel %d: RMS %.4f over the spans, want %.4f", c, rms, want)
					}
				}
			})
		}
	}
}

// TestBlankBounds: too many spans, an unknown fill or a file that is not
// a WAV are errors, and the file is left as it was.
func TestBlankBounds(t *testing.T) {
	wf := Format{Encoding: LinearPCM, BitDepth: 16, SampleRate: 8000, Channels: 1}
	orig := append(AppendWAVHeader(nil, wf, 1600), make([]byte, 1600)...)
	orig[WAVHeaderSize+100] = 7
	path, f := openTemp(t, orig)
	if err := Blank(f, make([]Span, MaxSpans+1), FillSilence); err == nil {
		t.Error("too many spans: no error")
	}
	if err := Blank(f, []Span{{0, 1}}, 0); err == nil {
		t.Error("fill 0: no error")
	}
	if err := Blank(f, []Span{{math.NaN(), 1}, {-5, -1}, {0.5, 0.4}}, FillSilence); err != nil {
		t.Error(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, orig) {
		t.Error("the file changed")
	}
	_, g := openTemp(t, []byte("not a wave file at all"))
	if err := Blank(g, []Span{{0, 1}}, FillSilence); err == nil {
		t.Error("not a WAV: no error")
	}
}

// openTemp writes b to a file of the test's and opens it for reading and
// writing (closed at the test's end).
func openTemp(t *testing.T, b []byte) (string, *os.File) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "a.wav")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return path, f
}

// TestWriteWAV: what WriteWAV writes decodes back to the same samples.
func TestWriteWAV(t *testing.T) {
	chans := [][]int16{make([]int16, 40000), make([]int16, 40000)}
	for i := range chans[0] {
		chans[0][i], chans[1][i] = int16(i*7), int16(-i*3)
	}
	path := filepath.Join(t.TempDir(), "w.wav")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	n, err := WriteWAV(f, chans)
	f.Close()
	if err != nil || n != int64(WAVHeaderSize+40000*4) {
		t.Fatalf("WriteWAV = %d, %v", n, err)
	}
	p, err := Decode(t.Context(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for c := range chans {
		for i := range chans[c] {
			if p.Channels[c][i] != chans[c][i] {
				t.Fatalf("channel %d sample %d: %d, want %d", c, i, p.Channels[c][i], chans[c][i])
			}
		}
	}
	if _, err := WriteWAV(f, [][]int16{{1}, {1, 2}}); err == nil {
		t.Error("channels of different lengths: no error")
	}
}

func TestPadSpans(t *testing.T) {
	got := PadSpans([]Span{{2, 3}, {0.05, 0.5}, {3.1, 3.5}, {5, 4}}, 0.08)
	want := []Span{{0, 0.58}, {1.92, 3.58}}
	if len(got) != len(want) {
		t.Fatalf("PadSpans = %v, want %v", got, want)
	}
	for i := range want {
		if math.Abs(got[i].Start-want[i].Start) > 1e-9 || math.Abs(got[i].End-want[i].End) > 1e-9 {
			t.Fatalf("PadSpans = %v, want %v", got, want)
		}
	}
}
