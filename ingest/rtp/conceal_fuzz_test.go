package rtp

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/earshot-dev/earshot/ingest/codec"
)

// blendSamples is how many received samples after a concealed span the
// concealer may change: spandsp's overlap-add at the end of a loss spans a
// quarter of the pitch period, at most a quarter of PLC_PITCH_MIN (120).
const blendSamples = 30

// FuzzConceal writes arbitrary audio and loss marks through a concealer
// in writes of arbitrary size: no error and no panic (spandsp is C), the
// output as long as the codec makes it, and every received sample past a
// loss's blend the same as the bytes decoded without concealment: G.711
// byte for byte, G.722 sample for sample of a fresh decoder fed the same
// bytes; with concealment off, G.711 passes untouched.
func FuzzConceal(f *testing.F) {
	f.Add([]byte{0x08, 4, 1, 2, 3, 4, 0, 1, 1, 0, 2, 9, 9, 0, 0})
	f.Add([]byte{0x0e, 3, 0xff, 0x7f, 0x00, 0x80, 0x11, 0x22, 1, 1, 1, 0, 0, 0, 6, 5, 5, 5, 5, 5, 5, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{0x0c, 2, 0xff, 0x7f, 0x10, 0x90, 1, 0, 1, 0, 3, 1, 2, 3, 4, 5, 6, 0, 0, 0, 0, 0, 0})
	f.Add(bytes.Repeat([]byte{0x0a, 8, 0x55, 0xd5, 0x55, 0xd5, 0x10, 0x90, 0x10, 0x90, 1, 1, 1, 1, 1, 1, 1, 1}, 20))
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 || len(in) > 1<<14 {
			return
		}
		c := []codec.Codec{codec.PCMU, codec.PCMA, codec.G722}[int(in[0])%3]
		channels := 1 + int(in[0]>>2)&1
		usePLC := in[0]>>3&1 == 1
		var s sink
		k, err := newConcealer(&s, c, channels, usePLC)
		if err != nil {
			t.Fatal(err)
		}
		defer k.Close()
		var sent, marks []byte
		for rest := in[1:]; len(rest) > 0; {
			n := int(rest[0]) * channels
			rest = rest[1:]
			if len(rest) < 2*n {
				break
			}
			b, l := append([]byte(nil), rest[:n]...), rest[n:2*n]
			rest = rest[2*n:]
			if !usePLC {
				l = nil
			}
			sent = append(sent, b...)
			if l != nil {
				marks = append(marks, l...)
			} else {
				marks = append(marks, make([]byte, n)...)
			}
			if err := k.write(t.Context(), b, l); err != nil {
				t.Fatalf("write: %v", err)
			}
		}
		got := s.bytes()
		if !c.Wideband() {
			if len(got) != len(sent) {
				t.Fatalf("%s: %d bytes out of %d", c, len(got), len(sent))
			}
			if !usePLC && !bytes.Equal(got, sent) {
				t.Fatalf("%s without concealment changed the bytes", c)
			}
			for i := range got {
				if received(marks, i, channels) && got[i] != sent[i] {
					t.Fatalf("%s: received byte %d changed %#x -> %#x", c, i, sent[i], got[i])
				}
			}
			return
		}
		if len(got) != 4*len(sent) {
			t.Fatalf("G.722: %d bytes out of %d (want 4 a byte)", len(got), len(sent))
		}
		for ch := range channels {
			var own []byte
			for i := ch; i < len(sent); i += channels {
				own = append(own, sent[i])
			}
			dec, err := codec.NewDecoder(c)
			if err != nil {
				t.Fatal(err)
			}
			want, err := dec.Decode(own, nil)
			dec.Close()
			if err != nil {
				t.Fatal(err)
			}
			for j, w := range want {
				i := (j/2)*channels + ch // the byte this sample came from
				v := int16(binary.LittleEndian.Uint16(got[2*(j*channels+ch):]))
				if received(marks, i, channels) && v != w {
					t.Fatalf("G.722 channel %d: received sample %d is %d, decoded %d", ch, j, v, w)
				}
			}
		}
	})
}

// received says that interleaved byte i was received and lies past the
// blend after its channel's last lost byte (blendSamples samples of 8 kHz
// bytes; the same count of bytes is twice as many 16 kHz samples, so a
// G.722 check that skips the first blendSamples bytes is conservative).
func received(marks []byte, i, channels int) bool {
	for k := 0; k <= blendSamples; k++ {
		j := i - k*channels
		if j < 0 {
			break
		}
		if marks[j] != 0 {
			return false
		}
	}
	return true
}
