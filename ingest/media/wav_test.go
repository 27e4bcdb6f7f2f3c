package media

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"testing"

	"github.com/zaf/g711"
)

// wavOpts shapes the header written by makeWAV.
type wavOpts struct {
	extensible bool
	dataSize   int64 // override the data chunk size field (0: the real size; -1: write 0xFFFFFFFF)
	preChunks  [][]byte
}

// encodeSamples interleaves channels of float samples into f's encoding.
func encodeSamples(t testing.TB, f Format, chans [][]float32) []byte {
	t.Helper()
	var out bytes.Buffer
	le := binary.LittleEndian
	for i := range chans[0] {
		for c := range chans {
			v := float64(chans[c][i])
			switch {
			case f.Encoding == LinearPCM && f.BitDepth == 8:
				out.WriteByte(byte(clampInt(math.Round(v*128)+128, 0, 255)))
			case f.Encoding == LinearPCM && f.BitDepth == 16:
				out.Write(le.AppendUint16(nil, uint16(int16(clampInt(math.Round(v*32768), -32768, 32767)))))
			case f.Encoding == LinearPCM && f.BitDepth == 24:
				x := uint32(int32(clampInt(math.Round(v*8388608), -8388608, 8388607)))
				out.Write([]byte{byte(x), byte(x >> 8), byte(x >> 16)})
			case f.Encoding == LinearPCM && f.BitDepth == 32:
				out.Write(le.AppendUint32(nil, uint32(int32(clampInt(math.Round(v*2147483648), -2147483648, 2147483647)))))
			case f.Encoding == Float && f.BitDepth == 32:
				out.Write(le.AppendUint32(nil, math.Float32bits(float32(v))))
			case f.Encoding == Float && f.BitDepth == 64:
				out.Write(le.AppendUint64(nil, math.Float64bits(v)))
			case f.Encoding == ALaw:
				out.WriteByte(g711.EncodeAlawFrame(int16(clampInt(math.Round(v*32768), -32768, 32767))))
			case f.Encoding == MuLaw:
				out.WriteByte(g711.EncodeUlawFrame(int16(clampInt(math.Round(v*32768), -32768, 32767))))
			default:
				t.Fatalf("encodeSamples: no encoder for %+v", f)
			}
		}
	}
	return out.Bytes()
}

func clampInt(v, lo, hi float64) int64 { return int64(math.Max(lo, math.Min(hi, v))) }

// makeWAV returns a complete WAV file holding data in format f.
func makeWAV(t testing.TB, f Format, data []byte, o wavOpts) []byte {
	t.Helper()
	le := binary.LittleEndian
	tag := map[Encoding]uint16{LinearPCM: 1, Float: 3, ALaw: 6, MuLaw: 7}[f.Encoding]
	var fmtc []byte
	fmtc = le.AppendUint16(fmtc, tag)
	fmtc = le.AppendUint16(fmtc, uint16(f.Channels))
	fmtc = le.AppendUint32(fmtc, uint32(f.SampleRate))
	fmtc = le.AppendUint32(fmtc, uint32(f.SampleRate*f.FrameSize()))
	fmtc = le.AppendUint16(fmtc, uint16(f.FrameSize()))
	fmtc = le.AppendUint16(fmtc, uint16(f.BitDepth))
	if o.extensible {
		le.PutUint16(fmtc[0:], 0xFFFE)
		fmtc = le.AppendUint16(fmtc, 22)
		fmtc = le.AppendUint16(fmtc, uint16(f.BitDepth))
		fmtc = le.AppendUint32(fmtc, 0)
		guid := []byte{0, 0, 0, 0, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71}
		le.PutUint16(guid, tag)
		fmtc = append(fmtc, guid...)
	} else if f.Encoding != LinearPCM {
		fmtc = le.AppendUint16(fmtc, 0) // cbSize
	}
	var body bytes.Buffer
	body.WriteString("WAVE")
	for _, c := range o.preChunks {
		body.Write(c)
	}
	body.Write(chunk("fmt ", fmtc))
	body.Write(chunk("fact", le.AppendUint32(nil, uint32(len(data)/max(1, f.FrameSize())))))
	size := uint32(len(data))
	switch {
	case o.dataSize == -1:
		size = 0xFFFFFFFF
	case o.dataSize > 0:
		size = uint32(o.dataSize)
	}
	body.WriteString("data")
	body.Write(le.AppendUint32(nil, size))
	body.Write(data)
	var out bytes.Buffer
	out.WriteString("RIFF")
	out.Write(le.AppendUint32(nil, uint32(body.Len())))
	out.Write(body.Bytes())
	return out.Bytes()
}

// chunk renders a RIFF chunk with its pad byte.
func chunk(id string, body []byte) []byte {
	b := append([]byte(id), binary.LittleEndian.AppendUint32(nil, uint32(len(body)))...)
	b = append(b, body...)
	if len(body)%2 == 1 {
		b = append(b, 0)
	}
	return b
}

// tones returns n frames of channels sine tones, channel c at 300+150c Hz,
// amplitude amp.
func tones(channels, rate, n int, amp float64) [][]float32 {
	out := make([][]float32, channels)
	for c := range out {
		out[c] = sine(n, rate, 300+150*float64(c), amp)
	}
	return out
}

func sine(n, rate int, freq, amp float64) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(amp * math.Sin(2*math.Pi*freq*float64(i)/float64(rate)))
	}
	return s
}

// allFormats lists every encoding and bit depth this package decodes, with
// the largest expected round-trip error at amplitude 0.5.
var allFormats = []struct {
	enc  Encoding
	bits int
	tol  float64
}{
	{LinearPCM, 8, 1.0 / 128},
	{LinearPCM, 16, 1.0 / 32768},
	{LinearPCM, 24, 1.0 / 8388608},
	{LinearPCM, 32, 1e-7},
	{Float, 32, 1e-7},
	{Float, 64, 1e-7},
	{ALaw, 8, 0.5 / 32},
	{MuLaw, 8, 0.5 / 32},
}

func TestWAVRoundTrip(t *testing.T) {
	rates := []int{8000, 11025, 16000, 22050, 24000, 32000, 44100, 48000}
	for _, af := range allFormats {
		for _, rate := range rates {
			for _, ch := range []int{1, 2, 3, 8} {
				for _, ext := range []bool{false, true} {
					f := Format{Encoding: af.enc, BitDepth: af.bits, SampleRate: rate, Channels: ch}
					name := fmt.Sprintf("%s%d/%d/%dch/ext=%v", af.enc, af.bits, rate, ch, ext)
					t.Run(name, func(t *testing.T) {
						want := tones(ch, rate, 257, 0.5)
						file := makeWAV(t, f, encodeSamples(t, f, want), wavOpts{extensible: ext})
						r := bytes.NewReader(file)
						got, n, err := ReadWAVHeader(r)
						if err != nil {
							t.Fatalf("ReadWAVHeader: %v", err)
						}
						if got != f {
							t.Fatalf("format = %+v, want %+v", got, f)
						}
						if n != int64(257*f.FrameSize()) {
							t.Fatalf("data length = %d, want %d", n, 257*f.FrameSize())
						}
						data, _ := io.ReadAll(r)
						dec, err := DecodeInterleaved(got, data, make([][]float32, ch))
						if err != nil {
							t.Fatalf("DecodeInterleaved: %v", err)
						}
						for c := range want {
							if len(dec[c]) != len(want[c]) {
								t.Fatalf("channel %d: %d samples, want %d", c, len(dec[c]), len(want[c]))
							}
							for i := range want[c] {
								if d := math.Abs(float64(dec[c][i] - want[c][i])); d > af.tol {
									t.Fatalf("channel %d sample %d = %v, want %v (error %g > %g)", c, i, dec[c][i], want[c][i], d, af.tol)
								}
							}
						}
					})
				}
			}
		}
	}
}

func TestReadWAVHeaderChunks(t *testing.T) {
	f := Format{Encoding: LinearPCM, BitDepth: 16, SampleRate: 16000, Channels: 1}
	data := encodeSamples(t, f, tones(1, 16000, 100, 0.5))
	list := chunk("LIST", append([]byte("INFOISFT"), chunk("x", []byte("abc"))...)) // odd-sized inner body
	odd := chunk("junk", []byte{1, 2, 3})                                           // padded to even
	tests := []struct {
		name    string
		file    []byte
		wantLen int64
	}{
		{"plain", makeWAV(t, f, data, wavOpts{}), 200},
		{"list and odd chunk first", makeWAV(t, f, data, wavOpts{preChunks: [][]byte{list, odd}}), 200},
		{"streaming 0xFFFFFFFF", makeWAV(t, f, data, wavOpts{dataSize: -1}), -1},
		{"extensible", makeWAV(t, f, data, wavOpts{extensible: true}), 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := bytes.NewReader(tt.file)
			got, n, err := ReadWAVHeader(r)
			if err != nil {
				t.Fatal(err)
			}
			if got != f || n != tt.wantLen {
				t.Fatalf("got %+v, %d; want %+v, %d", got, n, f, tt.wantLen)
			}
			rest, _ := io.ReadAll(r)
			if !bytes.Equal(rest, data) {
				t.Fatalf("reader not left at the first data byte: %d bytes follow, want %d", len(rest), len(data))
			}
		})
	}
	// A zero data size (a recorder that never patched it) is streaming too.
	file := makeWAV(t, f, data, wavOpts{})
	binary.LittleEndian.PutUint32(file[len(file)-len(data)-4:], 0)
	if _, n, err := ReadWAVHeader(bytes.NewReader(file)); err != nil || n != -1 {
		t.Fatalf("zero data size: n=%d err=%v, want -1, nil", n, err)
	}
}

func TestReadWAVHeaderErrors(t *testing.T) {
	f := Format{Encoding: LinearPCM, BitDepth: 16, SampleRate: 16000, Channels: 2}
	good := makeWAV(t, f, encodeSamples(t, f, tones(2, 16000, 10, 0.5)), wavOpts{})
	fmtAt := bytes.Index(good, []byte("fmt ")) + 8 // start of the fmt body
	patch := func(off int, v ...byte) []byte {
		b := bytes.Clone(good)
		copy(b[off:], v)
		return b
	}
	manyChunks := []byte("RIFF\x00\x00\x00\x00WAVE")
	for range maxWAVChunks + 1 {
		manyChunks = append(manyChunks, chunk("junk", nil)...)
	}
	tests := []struct {
		name string
		file []byte
		want error
	}{
		{"empty", nil, ErrCorrupt},
		{"short riff", []byte("RIFF\x10\x00"), ErrCorrupt},
		{"not riff", []byte("ID3\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"), ErrUnsupported},
		{"riff but avi", []byte("RIFF\x10\x00\x00\x00AVI LIST"), ErrUnsupported},
		{"header only", good[:12], ErrCorrupt},
		{"truncated fmt", good[:fmtAt+6], ErrCorrupt},
		{"fmt too small", patch(fmtAt-4, 8, 0, 0, 0), ErrCorrupt},
		{"fmt too large", patch(fmtAt-4, 0, 0, 1, 0), ErrCorrupt},
		{"zero channels", patch(fmtAt+2, 0, 0), ErrCorrupt},
		{"zero rate", patch(fmtAt+4, 0, 0, 0, 0), ErrCorrupt},
		{"bad block align", patch(fmtAt+12, 3, 0), ErrCorrupt},
		{"adpcm", patch(fmtAt, 2, 0), ErrUnsupported},
		{"12 bits in 12", patch(fmtAt+14, 12, 0), nil}, // 12-bit samples in 16-bit containers decode as 16
		{"pcm 40 bits", patch(fmtAt+12, 10, 0, 40, 0), ErrUnsupported},
		{"float 16 bits", patch(fmtAt, 3, 0), ErrUnsupported},
		{"no data chunk", good[:bytes.Index(good, []byte("data"))], ErrCorrupt},
		{"data before fmt", []byte("RIFF\x00\x00\x00\x00WAVEdata\x00\x00\x00\x00"), ErrCorrupt},
		{"chunk truncated", []byte("RIFF\x00\x00\x00\x00WAVELIST\xff\x00\x00\x00abc"), ErrCorrupt},
		{"too many chunks", manyChunks, ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := ReadWAVHeader(bytes.NewReader(tt.file))
			if tt.want == nil {
				if err != nil {
					t.Fatalf("err = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestReadWAVHeaderRF64(t *testing.T) {
	f := Format{Encoding: LinearPCM, BitDepth: 16, SampleRate: 8000, Channels: 1}
	data := encodeSamples(t, f, tones(1, 8000, 50, 0.5))
	ds64 := binary.LittleEndian.AppendUint64(nil, 0) // riff size
	ds64 = binary.LittleEndian.AppendUint64(ds64, uint64(len(data)))
	ds64 = binary.LittleEndian.AppendUint64(ds64, 50)
	ds64 = binary.LittleEndian.AppendUint32(ds64, 0)
	file := makeWAV(t, f, data, wavOpts{preChunks: [][]byte{chunk("ds64", ds64)}, dataSize: -1})
	copy(file, "RF64")
	got, n, err := ReadWAVHeader(bytes.NewReader(file))
	if err != nil || got != f || n != int64(len(data)) {
		t.Fatalf("got %+v, %d, %v; want %+v, %d, nil", got, n, err, f, len(data))
	}
}
