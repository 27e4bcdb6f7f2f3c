package media

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzReadWAVHeader: no panic; every error is ErrCorrupt or ErrUnsupported;
// a returned format is valid with a data length that is -1 or what the
// header said; and the parser never consumes more than the input.
func FuzzReadWAVHeader(f *testing.F) {
	pcm := Format{LinearPCM, 16, 16000, 1}
	f.Add(makeWAV(f, pcm, encodeSamples(f, pcm, tones(1, 16000, 8, 0.5)), wavOpts{}))
	ext := Format{Float, 32, 48000, 2}
	f.Add(makeWAV(f, ext, encodeSamples(f, ext, tones(2, 48000, 4, 0.5)), wavOpts{extensible: true, preChunks: [][]byte{chunk("LIST", []byte("INFOabc"))}}))
	alaw := Format{ALaw, 8, 8000, 1}
	f.Add(makeWAV(f, alaw, encodeSamples(f, alaw, tones(1, 8000, 4, 0.5)), wavOpts{dataSize: -1}))
	f.Add([]byte("RIFF\x00\x00\x00\x00WAVEfmt \x10\x00\x00\x00"))
	f.Add([]byte("RF64\xff\xff\xff\xffWAVEds64\x1c\x00\x00\x00"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bytes.NewReader(b)
		got, n, err := ReadWAVHeader(r)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("error %v is neither ErrCorrupt nor ErrUnsupported", err)
			}
			return
		}
		if verr := got.Validate(); verr != nil {
			t.Fatalf("format %+v accepted but invalid: %v", got, verr)
		}
		if n < -1 {
			t.Fatalf("data length %d", n)
		}
		// Decoding whatever follows must not panic either.
		rest, _ := io.ReadAll(io.LimitReader(r, 1<<16))
		rest = rest[:len(rest)/got.FrameSize()*got.FrameSize()]
		if _, err := DecodeInterleaved(got, rest, nil); err != nil {
			t.Fatalf("DecodeInterleaved after a valid header: %v", err)
		}
	})
}

// FuzzDecodeInterleaved: no panic for any format and bytes; output grows
// by exactly len(b)/FrameSize samples per channel, all within [-1, 1].
func FuzzDecodeInterleaved(f *testing.F) {
	f.Add(int(LinearPCM), 16, 2, []byte{1, 2, 3, 4})
	f.Add(int(LinearPCM), 24, 1, []byte{0xff, 0xff, 0x7f})
	f.Add(int(LinearPCM), 8, 3, []byte{0, 128, 255})
	f.Add(int(Float), 32, 1, []byte{0, 0, 0xc0, 0x7f}) // NaN
	f.Add(int(Float), 64, 1, []byte{0, 0, 0, 0, 0, 0, 0xf0, 0x7f})
	f.Add(int(ALaw), 8, 2, []byte{0xd5, 0x55})
	f.Add(int(MuLaw), 8, 1, []byte{0x7f})
	f.Add(0, 16, 1, []byte{})
	f.Add(int(LinearPCM), 16, 100000, []byte{1})
	f.Fuzz(func(t *testing.T, enc, bits, channels int, b []byte) {
		fm := Format{Encoding: Encoding(enc), BitDepth: bits, SampleRate: 8000, Channels: channels}
		out, err := DecodeInterleaved(fm, b, nil)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("error %v is neither ErrCorrupt nor ErrUnsupported", err)
			}
			return
		}
		want := len(b) / fm.FrameSize()
		if len(out) != channels {
			t.Fatalf("%d channels out, want %d", len(out), channels)
		}
		for c := range out {
			if len(out[c]) != want {
				t.Fatalf("channel %d has %d samples, want %d", c, len(out[c]), want)
			}
			for _, v := range out[c] {
				if !(v >= -1 && v <= 1) {
					t.Fatalf("sample %v outside [-1, 1]", v)
				}
			}
		}
	})
}
