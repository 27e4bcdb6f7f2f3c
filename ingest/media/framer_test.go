package media

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
	"testing"
)

// framerFormats are the live formats of PROTOCOL.md (pcm_s16le, pcm_f32le,
// mu-law, A-law) at telephony, wideband and studio rates.
var framerFormats = []Format{
	{Encoding: LinearPCM, BitDepth: 16, SampleRate: 16000, Channels: 1},
	{Encoding: LinearPCM, BitDepth: 16, SampleRate: 8000, Channels: 2},
	{Encoding: MuLaw, BitDepth: 8, SampleRate: 8000, Channels: 1},
	{Encoding: ALaw, BitDepth: 8, SampleRate: 8000, Channels: 2},
	{Encoding: Float, BitDepth: 32, SampleRate: 32000, Channels: 1},
	{Encoding: LinearPCM, BitDepth: 24, SampleRate: 48000, Channels: 3},
}

// frameAll pushes b through a fresh Framer in the chunks cuts describes
// (each byte of cuts is the next chunk's length, 0 meaning an empty push;
// the rest of b goes last) and returns every sample per channel, Flush
// included, and the whole-frame bytes Push reported.
func frameAll(t testing.TB, f Format, b, cuts []byte) ([][]int16, []byte) {
	t.Helper()
	fr, err := NewFramer(f, 16000)
	if err != nil {
		t.Fatal(err)
	}
	all := make([][]int16, f.Channels)
	var whole []byte
	push := func(chunk []byte) {
		pcm, w := fr.Push(chunk)
		if len(pcm) != f.Channels {
			t.Fatalf("%d channels out, want %d", len(pcm), f.Channels)
		}
		for c := range pcm {
			all[c] = append(all[c], pcm[c]...)
		}
		whole = append(whole, w...)
		if fr.Pending() >= f.FrameSize() {
			t.Fatalf("pending %d bytes >= frame size %d", fr.Pending(), f.FrameSize())
		}
	}
	for _, n := range cuts {
		n := min(int(n), len(b))
		push(b[:n])
		b = b[n:]
	}
	push(b)
	for c, tail := range fr.Flush() {
		all[c] = append(all[c], tail...)
	}
	if fr.Pending() != 0 {
		t.Fatalf("pending %d bytes after Flush", fr.Pending())
	}
	return all, whole
}

// FuzzFramer: raw PCM, float and G.711 frames cut anywhere give exactly the
// samples of the same bytes pushed at once: the count per channel is what
// the rates say, whole frames are passed through in order, and nothing
// panics.
func FuzzFramer(f *testing.F) {
	tone := make([]byte, 0, 640)
	for i := range 320 {
		tone = binary.LittleEndian.AppendUint16(tone, uint16(int16(8000*math.Sin(float64(i)/5))))
	}
	f.Add(uint8(0), tone, []byte{1, 3, 0, 200, 7})
	f.Add(uint8(1), tone, []byte{3})
	f.Add(uint8(2), bytes.Repeat([]byte{0xff, 0x7f, 0x00, 0x80}, 100), []byte{160, 160, 1})
	f.Add(uint8(3), bytes.Repeat([]byte{0xd5, 0x55}, 200), []byte{0, 0, 5})
	f.Add(uint8(4), []byte{0, 0, 0xc0, 0x7f, 0, 0, 0x80, 0x7f, 1}, []byte{2, 2})
	f.Add(uint8(5), []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, []byte{})
	f.Fuzz(func(t *testing.T, which uint8, b, cuts []byte) {
		fm := framerFormats[int(which)%len(framerFormats)]
		if len(cuts) > 64 {
			cuts = cuts[:64]
		}
		got, whole := frameAll(t, fm, b, cuts)
		want, _ := frameAll(t, fm, b, nil)
		fs := fm.FrameSize()
		frames := len(b) / fs
		if !bytes.Equal(whole, b[:frames*fs]) {
			t.Fatalf("whole frames are not the input's first %d bytes", frames*fs)
		}
		// ceil(frames * 16000 / rate) samples per channel (Resampler.Flush).
		n := (frames*16000 + fm.SampleRate - 1) / fm.SampleRate
		for c := range got {
			if len(got[c]) != n {
				t.Fatalf("channel %d: %d samples, want %d", c, len(got[c]), n)
			}
			if !slices.Equal(got[c], want[c]) {
				t.Fatalf("channel %d: chunked output differs from one push", c)
			}
		}
	})
}

// TestFramerMuLaw: G.711 mu-law at 8 kHz decodes to the samples zaf/g711's
// table gives (through DecodeInterleaved) and is upsampled to twice as many.
func TestFramerMuLaw(t *testing.T) {
	fr, err := NewFramer(Format{Encoding: MuLaw, BitDepth: 8, SampleRate: 8000, Channels: 1}, 8000)
	if err != nil {
		t.Fatal(err)
	}
	pcm, _ := fr.Push([]byte{0xff, 0x7f, 0x00, 0x80})
	if want := []int16{0, 0, -32124, 32124}; !slices.Equal(pcm[0], want) {
		t.Fatalf("mu-law decode %v, want %v", pcm[0], want)
	}
	if _, err := NewFramer(Format{Encoding: MuLaw, BitDepth: 16, SampleRate: 8000, Channels: 1}, 16000); err == nil {
		t.Fatal("16-bit mu-law accepted")
	}
}
