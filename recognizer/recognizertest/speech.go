package recognizertest

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Clip is one row of shared/testdata/speech/manifest.tsv.
type Clip struct {
	File       string  // file name in the speech directory
	Path       string  // absolute path
	Duration   float64 // seconds
	SampleRate int
	Transcript string // reference text: lower case, no punctuation
	Speakers   string
	Notes      string
}

// SpeechDir returns the absolute path of shared/testdata/speech. It walks up
// from the working directory looking for a directory that has a "shared"
// entry holding testdata/speech (the repository sits beside shared/, both
// on developer machines and in CI). The test fails if there is none.
func SpeechDir(t testing.TB) string {
	t.Helper()
	dir, err := LocateSpeechDir()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// LocateSpeechDir is SpeechDir for programs (benchmarks): it returns an
// error instead of failing a test.
func LocateSpeechDir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("recognizertest: %w", err)
	}
	for d := wd; ; {
		cand := filepath.Join(d, "shared", "testdata", "speech")
		if st, err := os.Stat(filepath.Join(cand, "manifest.tsv")); err == nil && !st.IsDir() {
			return cand, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("recognizertest: no shared/testdata/speech above %s", wd)
		}
		d = parent
	}
}

// Manifest parses manifest.tsv of the speech directory. The test fails on
// a missing or malformed file.
func Manifest(t testing.TB) []Clip {
	t.Helper()
	dir := SpeechDir(t)
	f, err := os.Open(filepath.Join(dir, "manifest.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	clips, err := ParseManifest(f, dir)
	if err != nil {
		t.Fatal(err)
	}
	return clips
}

// ParseManifest reads a manifest in the format of manifest.tsv (a header
// line, then tab-separated file, duration_s, sample_rate, transcript,
// speakers, source_repo, source_path, license, notes) and resolves each
// file against dir.
func ParseManifest(r io.Reader, dir string) ([]Clip, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	var clips []Clip
	line := 0
	for sc.Scan() {
		line++
		if line == 1 || strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		f := strings.Split(sc.Text(), "\t")
		if len(f) < 9 {
			return nil, fmt.Errorf("recognizertest: manifest line %d: %d fields, want 9", line, len(f))
		}
		dur, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			return nil, fmt.Errorf("recognizertest: manifest line %d: duration: %w", line, err)
		}
		rate, err := strconv.Atoi(f[2])
		if err != nil {
			return nil, fmt.Errorf("recognizertest: manifest line %d: sample rate: %w", line, err)
		}
		clips = append(clips, Clip{
			File:       f[0],
			Path:       filepath.Join(dir, f[0]),
			Duration:   dur,
			SampleRate: rate,
			Transcript: f[3],
			Speakers:   f[4],
			Notes:      f[8],
		})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("recognizertest: manifest: %w", err)
	}
	return clips, nil
}

// ReadWAV16 reads a 16 kHz 16-bit PCM WAV file and returns one slice of
// samples per channel. The test fails on any other format.
func ReadWAV16(t testing.TB, path string) [][]int16 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ch, err := DecodeWAV16(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return ch
}

// errWAV is wrapped by DecodeWAV16 for input it cannot read.
var errWAV = errors.New("recognizertest: unsupported wav")

// maxWAVData bounds the data chunk DecodeWAV16 accepts (512 MiB).
const maxWAVData = 512 << 20

// DecodeWAV16 parses a RIFF WAVE stream holding 16 kHz 16-bit PCM (format
// 1, or WAVE_FORMAT_EXTENSIBLE with PCM subformat), skipping other chunks.
func DecodeWAV16(r io.Reader) ([][]int16, error) {
	var hdr [12]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, fmt.Errorf("%w: riff header: %w", errWAV, err)
	}
	if string(hdr[0:4]) != "RIFF" || string(hdr[8:12]) != "WAVE" {
		return nil, fmt.Errorf("%w: not riff wave", errWAV)
	}
	channels := 0
	for {
		var ch [8]byte
		if _, err := io.ReadFull(r, ch[:]); err != nil {
			return nil, fmt.Errorf("%w: no data chunk: %w", errWAV, err)
		}
		id, size := string(ch[0:4]), binary.LittleEndian.Uint32(ch[4:8])
		switch id {
		case "fmt ":
			if size < 16 || size > 1024 {
				return nil, fmt.Errorf("%w: fmt chunk size %d", errWAV, size)
			}
			b := make([]byte, size+size%2)
			if _, err := io.ReadFull(r, b); err != nil {
				return nil, fmt.Errorf("%w: fmt chunk: %w", errWAV, err)
			}
			format := binary.LittleEndian.Uint16(b[0:2])
			channels = int(binary.LittleEndian.Uint16(b[2:4]))
			rate := binary.LittleEndian.Uint32(b[4:8])
			bits := binary.LittleEndian.Uint16(b[14:16])
			if format == 0xFFFE && size >= 26 {
				format = binary.LittleEndian.Uint16(b[24:26])
			}
			if format != 1 || bits != 16 || rate != 16000 || channels < 1 || channels > 16 {
				return nil, fmt.Errorf("%w: format %d, %d bits, %d Hz, %d channels (want pcm 16 bits 16000 Hz)",
					errWAV, format, bits, rate, channels)
			}
		case "data":
			if channels == 0 {
				return nil, fmt.Errorf("%w: data before fmt", errWAV)
			}
			if size > maxWAVData {
				return nil, fmt.Errorf("%w: data %d bytes > limit %d", errWAV, size, maxWAVData)
			}
			b := make([]byte, size)
			n, err := io.ReadFull(r, b)
			if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, fmt.Errorf("%w: data: %w", errWAV, err)
			}
			frames := n / (2 * channels)
			out := make([][]int16, channels)
			for c := range out {
				out[c] = make([]int16, frames)
			}
			for i := range frames {
				for c := range channels {
					off := 2 * (i*channels + c)
					out[c][i] = int16(binary.LittleEndian.Uint16(b[off:]))
				}
			}
			return out, nil
		default:
			if size > maxWAVData {
				return nil, fmt.Errorf("%w: chunk %q %d bytes > limit %d", errWAV, id, size, maxWAVData)
			}
			if _, err := io.CopyN(io.Discard, r, int64(size)+int64(size%2)); err != nil {
				return nil, fmt.Errorf("%w: chunk %q: %w", errWAV, id, err)
			}
		}
	}
}
