package pipeline

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/ingest/media"
)

// silentWAV writes seconds of 8-bit PCM silence at 1 kHz on channels
// channels.
func silentWAV(t *testing.T, channels, seconds int) string {
	t.Helper()
	n := channels * seconds * 1000
	le := binary.LittleEndian
	b := le.AppendUint32([]byte("RIFF"), uint32(36+n))
	b = le.AppendUint32(append(b, "WAVEfmt "...), 16)
	b = le.AppendUint16(le.AppendUint16(b, 1), uint16(channels))
	b = le.AppendUint32(le.AppendUint32(b, 1000), uint32(1000*channels))
	b = le.AppendUint16(le.AppendUint16(b, uint16(channels)), 8)
	b = le.AppendUint32(append(b, "data"...), uint32(n))
	for range n {
		b = append(b, 0x80)
	}
	path := filepath.Join(t.TempDir(), "a.wav")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestProbeFile: ProbeFile refuses audio over each bound of Media with the
// contract's 413 and a message naming audio and the limit, unreadable
// audio with 422, and describes the rest; TranscribeFile refuses the same
// audio with the same errors before decoding it.
func TestProbeFile(t *testing.T) {
	tr := &Transcriber{Media: media.Options{MaxDuration: time.Minute, MaxDecodedBytes: 60 * media.DecodedBytesPerSecond}}
	text := filepath.Join(t.TempDir(), "a.txt")
	os.WriteFile(text, []byte("not audio at all"), 0o600)
	tests := []struct {
		name   string
		path   string
		status int
		msg    string
	}{
		{"within", silentWAV(t, 2, 30), 200, ""},
		{"too long", silentWAV(t, 1, 61), 413, "audio: longer than the limit of 1m0s"},
		{"9 channels", silentWAV(t, 9, 1), 413, "audio: more than 8 channels"},
		{"channels times duration", silentWAV(t, 3, 30), 413, "audio: duration times channels over the limit of 1m0s of audio summed over its channels"},
		{"not audio", text, 422, "audio: not a readable audio file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info, err := tr.ProbeFile(t.Context(), tt.path)
			if errcode.Status(err) != tt.status || err != nil && errcode.Message(err) != tt.msg {
				t.Fatalf("ProbeFile = %+v, %v (%d %q), want %d %q", info, err, errcode.Status(err), errcode.Message(err), tt.status, tt.msg)
			}
			if tt.status == 200 {
				return
			}
			if _, _, err := tr.TranscribeFile(t.Context(), tt.path, nil); errcode.Status(err) != tt.status || errcode.Message(err) != tt.msg {
				t.Errorf("TranscribeFile = %v (%d %q), want %d %q", err, errcode.Status(err), errcode.Message(err), tt.status, tt.msg)
			}
		})
	}
}
