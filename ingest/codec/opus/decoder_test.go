package opus

import (
	"errors"
	"testing"
)

func TestNewDecoderRefuses(t *testing.T) {
	for _, c := range []struct{ rate, channels int }{{44100, 1}, {16000, 0}, {16000, 3}, {0, 1}} {
		if d, err := NewDecoder(c.rate, c.channels); !errors.Is(err, ErrInit) {
			t.Errorf("NewDecoder(%d, %d) = %v, %v; want ErrInit", c.rate, c.channels, d, err)
		}
	}
}

func TestDecodeBounds(t *testing.T) {
	d, err := NewDecoder(16000, 1)
	if err != nil {
		t.Fatal(err)
	}
	if d.MaxSamples() != 1920 {
		t.Errorf("MaxSamples %d, want 120 ms = 1920", d.MaxSamples())
	}
	// A 20 ms CELT silence frame (TOC 0xF8: fullband CELT 20 ms, code 0).
	out, err := d.Decode([]byte{0xF8, 0xFF, 0xFE}, make([]int16, 3))
	if err != nil || len(out) != 3+320 {
		t.Fatalf("Decode: %d samples, %v; want 3+320", len(out), err)
	}
	if _, err := d.Decode(make([]byte, MaxPacket+1), nil); !errors.Is(err, ErrPacket) {
		t.Errorf("oversized packet: %v, want ErrPacket", err)
	}
	// Code 3 with a frame count of 48 x 20 ms = 960 ms: over 120 ms.
	if _, err := d.Decode([]byte{0xFB, 0x30}, nil); !errors.Is(err, ErrPacket) {
		t.Errorf("a packet over 120 ms: %v, want ErrPacket", err)
	}
	d.Close()
	d.Close()
	if _, err := d.Decode([]byte{0xF8}, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v, want ErrClosed", err)
	}
}
