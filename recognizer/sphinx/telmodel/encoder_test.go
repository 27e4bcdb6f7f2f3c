package telmodel

import (
	"bytes"
	"encoding/binary"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// TestNearestIsFFmpegs: the Nearest encoder gives ffmpeg's pcm_mulaw and
// pcm_alaw bytes for the same 8 kHz samples, and the Magnitude encoder does
// not (they differ on quiet samples), so the adaptation set holds two
// encoders' audio, not one twice.
func TestNearestIsFFmpegs(t *testing.T) {
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Fatalf("ffmpeg: %v (make test-deps installs it)", err)
	}
	src := filepath.Join(recognizertest.SpeechDir(t), "ls-test-clean-1089-134686-0000.wav")
	pcmBytes, err := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-i", src, "-ar", "8000", "-ac", "1", "-f", "s16le", "-").Output()
	if err != nil {
		t.Fatal(err)
	}
	pcm := make([]int16, len(pcmBytes)/2)
	if err := binary.Read(bytes.NewReader(pcmBytes), binary.LittleEndian, pcm); err != nil {
		t.Fatal(err)
	}
	for _, law := range Laws {
		cmd := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-f", "s16le", "-ar", "8000", "-ac", "1", "-i", "-", "-f", law.String(), "-")
		cmd.Stdin = bytes.NewReader(pcmBytes)
		want, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		if len(want) != len(pcm) {
			t.Fatalf("%s: ffmpeg gave %d codes for %d samples", law, len(want), len(pcm))
		}
		differ := map[Encoder]int{}
		for _, enc := range []Encoder{Magnitude, Nearest} {
			v := Variant{Law: law, Encoder: enc}
			for i, s := range pcm {
				if v.encode(s) != want[i] {
					if differ[enc]++; enc == Nearest && differ[enc] <= 5 {
						t.Errorf("%s: sample %d (%d): code %#02x, ffmpeg %#02x", v, i, s, v.encode(s), want[i])
					}
				}
			}
		}
		t.Logf("%s: %d samples, Magnitude differs from ffmpeg on %d, Nearest on %d", law, len(pcm), differ[Magnitude], differ[Nearest])
		if differ[Nearest] != 0 || differ[Magnitude] == 0 {
			t.Errorf("%s: Nearest differs from ffmpeg on %d samples (want 0), Magnitude on %d (want some)", law, differ[Nearest], differ[Magnitude])
		}
	}
}
