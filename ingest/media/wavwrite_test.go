package media

import (
	"bytes"
	"testing"
)

// TestAppendWAVHeaderRoundTrip: what AppendWAVHeader writes, ReadWAVHeader
// reads back as the same format and length, for every encoding a live
// recording can have and for the "unknown length" header.
func TestAppendWAVHeaderRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		f   Format
		len int64
	}{
		{Format{Encoding: LinearPCM, BitDepth: 16, SampleRate: 16000, Channels: 1}, 32000},
		{Format{Encoding: LinearPCM, BitDepth: 16, SampleRate: 48000, Channels: 2}, 0},
		{Format{Encoding: MuLaw, BitDepth: 8, SampleRate: 8000, Channels: 1}, 160},
		{Format{Encoding: ALaw, BitDepth: 8, SampleRate: 8000, Channels: 2}, -1},
	} {
		b := AppendWAVHeader([]byte("x"), tc.f, tc.len)[1:]
		if len(b) != WAVHeaderSize {
			t.Fatalf("%+v: header of %d bytes, want %d", tc.f, len(b), WAVHeaderSize)
		}
		f, n, err := ReadWAVHeader(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%+v: %v", tc.f, err)
		}
		want := tc.len
		if want <= 0 {
			want = -1 // 0 and unknown both read as "to the end of the file"
		}
		if f != tc.f || n != want {
			t.Errorf("read %+v, %d; want %+v, %d", f, n, tc.f, want)
		}
	}
}
