package recognizertest

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestWER(t *testing.T) {
	tests := []struct {
		name     string
		ref, hyp string
		want     float64
	}{
		{"equal", "go forward ten meters", "go forward ten meters", 0},
		{"case and punctuation", "Go forward, ten meters!", "go forward ten meters", 0},
		{"substitution", "go forward ten meters", "go forward tan meters", 0.25},
		{"deletion", "go forward ten meters", "go ten meters", 0.25},
		{"insertion", "go forward ten meters", "go forward ten the meters", 0.25},
		{"all wrong and longer", "a b", "c d e", 1.5},
		{"apostrophe in word kept", "i'm here", "im here", 0.5},
		{"quotes stripped", "'hello' world", "hello world", 0},
		{"hyphen splits", "forty-two", "forty two", 0},
		{"empty both", "", "", 0},
		{"empty reference", "", "a b", 2},
		{"empty hypothesis", "a b c d", "", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := WER(tt.ref, tt.hyp); math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("WER(%q, %q) = %v, want %v", tt.ref, tt.hyp, got, tt.want)
			}
		})
	}
}

func TestManifest(t *testing.T) {
	clips := Manifest(t)
	if len(clips) < 10 {
		t.Fatalf("%d clips", len(clips))
	}
	var stereo int
	for _, c := range clips {
		if !filepath.IsAbs(c.Path) || c.Duration <= 0 || c.SampleRate != 16000 || c.Transcript == "" {
			t.Errorf("clip %+v", c)
		}
		ch := ReadWAV16(t, c.Path)
		if got := float64(len(ch[0])) / 16000; math.Abs(got-c.Duration) > 0.01 {
			t.Errorf("%s: %.3f s of audio, manifest says %.2f", c.File, got, c.Duration)
		}
		if len(ch) == 2 {
			stereo++
		}
	}
	if stereo != 1 {
		t.Errorf("%d stereo clips, want 1", stereo)
	}
}

func TestParseManifestErrors(t *testing.T) {
	tests := []struct{ name, body string }{
		{"few fields", "header\na.wav\t1.0\t16000\n"},
		{"bad duration", "header\na.wav\tx\t16000\tt\t1\tr\tp\tl\tn\n"},
		{"bad rate", "header\na.wav\t1\tx\tt\t1\tr\tp\tl\tn\n"},
	}
	for _, tt := range tests {
		if _, err := ParseManifest(strings.NewReader(tt.body), "/d"); err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}
}

// wav builds a RIFF WAVE file; extra chunks go before "data".
func wav(channels, rate, bits int, samples []int16, extra ...[]byte) []byte {
	var b bytes.Buffer
	data := new(bytes.Buffer)
	binary.Write(data, binary.LittleEndian, samples)
	b.WriteString("RIFF")
	binary.Write(&b, binary.LittleEndian, uint32(0))
	b.WriteString("WAVEfmt ")
	for _, v := range []any{uint32(16), uint16(1), uint16(channels), uint32(rate),
		uint32(rate * channels * bits / 8), uint16(channels * bits / 8), uint16(bits)} {
		binary.Write(&b, binary.LittleEndian, v)
	}
	for _, e := range extra {
		b.Write(e)
	}
	b.WriteString("data")
	binary.Write(&b, binary.LittleEndian, uint32(data.Len()))
	b.Write(data.Bytes())
	return b.Bytes()
}

func TestDecodeWAV16(t *testing.T) {
	list := append([]byte("LIST\x03\x00\x00\x00abc"), 0) // odd size, padded
	tests := []struct {
		name    string
		in      []byte
		want    [][]int16
		wantErr bool
	}{
		{"mono", wav(1, 16000, 16, []int16{1, -2, 3}), [][]int16{{1, -2, 3}}, false},
		{"stereo with list chunk", wav(2, 16000, 16, []int16{1, 2, 3, 4}, list), [][]int16{{1, 3}, {2, 4}}, false},
		{"8 kHz", wav(1, 8000, 16, []int16{1}), nil, true},
		{"8 bit", wav(1, 16000, 8, []int16{1}), nil, true},
		{"not riff", []byte("RIFX0000WAVE"), nil, true},
		{"truncated", wav(1, 16000, 16, nil)[:20], nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeWAV16(bytes.NewReader(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err %v", err)
			}
			if !slices.EqualFunc(got, tt.want, slices.Equal) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func FuzzDecodeWAV16(f *testing.F) {
	f.Add(wav(1, 16000, 16, []int16{1, 2, 3}))
	f.Add(wav(2, 16000, 16, []int16{1, 2, 3, 4}, []byte("junk\x02\x00\x00\x00ab")))
	f.Fuzz(func(t *testing.T, b []byte) {
		ch, err := DecodeWAV16(bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, c := range ch[1:] {
			if len(c) != len(ch[0]) {
				t.Fatalf("channels of %d and %d samples", len(ch[0]), len(c))
			}
		}
	})
}

// TestSpeechDirWalksUp checks the search for a sibling shared/ directory
// from a nested working directory.
func TestSpeechDirWalksUp(t *testing.T) {
	root := t.TempDir()
	want := filepath.Join(root, "shared", "testdata", "speech")
	deep := filepath.Join(root, "repo", "a", "b")
	for _, d := range []string{want, deep} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(want, "manifest.tsv"), []byte("header\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(deep)
	got, err := LocateSpeechDir()
	if err != nil || got != want {
		t.Fatalf("speechDir() = %q, %v; want %q", got, err, want)
	}
}
