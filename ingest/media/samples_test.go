package media

import (
	"errors"
	"math"
	"testing"

	"github.com/zaf/g711"
)

func TestDecodeInterleavedValues(t *testing.T) {
	tests := []struct {
		name string
		f    Format
		in   []byte
		want [][]float32
	}{
		{"pcm8 unsigned", Format{LinearPCM, 8, 8000, 1}, []byte{0, 128, 255}, [][]float32{{-1, 0, 127.0 / 128}}},
		{"pcm16 stereo", Format{LinearPCM, 16, 8000, 2}, []byte{0x00, 0x80, 0xff, 0x7f, 0x00, 0x40, 0x01, 0x00},
			[][]float32{{-1, 0.5}, {32767.0 / 32768, 1.0 / 32768}}},
		{"pcm24 sign", Format{LinearPCM, 24, 8000, 1}, []byte{0xff, 0xff, 0xff, 0x00, 0x00, 0x80, 0x00, 0x00, 0x40},
			[][]float32{{-1.0 / 8388608, -1, 0.5}}},
		{"pcm32", Format{LinearPCM, 32, 8000, 1}, []byte{0, 0, 0, 0x80, 0, 0, 0, 0xc0}, [][]float32{{-1, -0.5}}},
		{"float32 clamp and nan", Format{Float, 32, 8000, 1},
			append(append(f32(2.5), f32(float32(math.NaN()))...), f32(-0.25)...), [][]float32{{1, 0, -0.25}}},
		{"float64", Format{Float, 64, 8000, 1}, f64(-3), [][]float32{{-1}}},
		{"alaw", Format{ALaw, 8, 8000, 1}, []byte{0xd5, 0x2a}, [][]float32{
			{float32(g711.DecodeAlawFrame(0xd5)) / 32768, float32(g711.DecodeAlawFrame(0x2a)) / 32768}}},
		{"mulaw", Format{MuLaw, 8, 8000, 1}, []byte{0xff, 0x00, 0x80}, [][]float32{{0, -32124.0 / 32768, 32124.0 / 32768}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeInterleaved(tt.f, tt.in, nil)
			if err != nil {
				t.Fatal(err)
			}
			for c := range tt.want {
				if len(got[c]) != len(tt.want[c]) {
					t.Fatalf("channel %d: %v, want %v", c, got[c], tt.want[c])
				}
				for i := range tt.want[c] {
					if got[c][i] != tt.want[c][i] {
						t.Fatalf("channel %d: %v, want %v", c, got[c], tt.want[c])
					}
				}
			}
		})
	}
}

func f32(v float32) []byte {
	b := math.Float32bits(v)
	return []byte{byte(b), byte(b >> 8), byte(b >> 16), byte(b >> 24)}
}

func f64(v float64) []byte {
	b := math.Float64bits(v)
	out := make([]byte, 8)
	for i := range out {
		out[i] = byte(b >> (8 * i))
	}
	return out
}

func TestDecodeInterleavedAppends(t *testing.T) {
	f := Format{LinearPCM, 16, 8000, 2}
	dst := [][]float32{{7}, {8}}
	dst, err := DecodeInterleaved(f, []byte{0, 0x40, 0, 0xc0}, dst)
	if err != nil {
		t.Fatal(err)
	}
	if len(dst[0]) != 2 || dst[0][0] != 7 || dst[0][1] != 0.5 || dst[1][0] != 8 || dst[1][1] != -0.5 {
		t.Fatalf("dst = %v", dst)
	}
}

func TestDecodeInterleavedErrors(t *testing.T) {
	tests := []struct {
		name string
		f    Format
		in   []byte
		dst  [][]float32
		want error
	}{
		{"partial frame", Format{LinearPCM, 16, 8000, 2}, []byte{1, 2, 3}, nil, ErrCorrupt},
		{"pcm 12 bits", Format{LinearPCM, 12, 8000, 1}, nil, nil, ErrUnsupported},
		{"float 16", Format{Float, 16, 8000, 1}, nil, nil, ErrUnsupported},
		{"alaw 16", Format{ALaw, 16, 8000, 1}, nil, nil, ErrUnsupported},
		{"no encoding", Format{0, 16, 8000, 1}, nil, nil, ErrUnsupported},
		{"zero channels", Format{LinearPCM, 16, 8000, 0}, nil, nil, ErrUnsupported},
		{"too many channels", Format{LinearPCM, 16, 8000, MaxFormatChannels + 1}, nil, nil, ErrUnsupported},
		{"zero rate", Format{LinearPCM, 16, 0, 1}, nil, nil, ErrUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeInterleaved(tt.f, tt.in, tt.dst)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
	if _, err := DecodeInterleaved(Format{LinearPCM, 16, 8000, 2}, []byte{0, 0, 0, 0}, make([][]float32, 3)); err == nil {
		t.Fatal("dst with 3 channels for a 2-channel format: no error")
	}
}

func TestFormatFrameSize(t *testing.T) {
	tests := []struct {
		f    Format
		want int
	}{
		{Format{LinearPCM, 24, 48000, 2}, 6},
		{Format{Float, 64, 48000, 3}, 24},
		{Format{MuLaw, 8, 8000, 1}, 1},
		{Format{LinearPCM, 20, 8000, 1}, 0},
	}
	for _, tt := range tests {
		if got := tt.f.FrameSize(); got != tt.want {
			t.Errorf("%+v.FrameSize() = %d, want %d", tt.f, got, tt.want)
		}
	}
}

func TestToInt16(t *testing.T) {
	in := []float32{0, 0.5, -0.5, 1, -1, 1.5, -1.5, float32(math.NaN()), 1.0 / 32768, -0.49 / 32768}
	want := []int16{0, 16384, -16384, 32767, -32768, 32767, -32768, 0, 1, 0}
	got := ToInt16(in, []int16{9})
	if len(got) != len(want)+1 || got[0] != 9 {
		t.Fatalf("ToInt16 did not append: %v", got)
	}
	for i, w := range want {
		if got[i+1] != w {
			t.Errorf("ToInt16(%v) = %d, want %d", in[i], got[i+1], w)
		}
	}
}

func TestEncodingString(t *testing.T) {
	for e, want := range map[Encoding]string{LinearPCM: "pcm", Float: "float", ALaw: "alaw", MuLaw: "mulaw", 9: "encoding(9)"} {
		if e.String() != want {
			t.Errorf("%d.String() = %q, want %q", int(e), e.String(), want)
		}
	}
}
