package live

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/earshot-dev/earshot/ingest"
	"github.com/earshot-dev/earshot/ingest/dtmf"
	"github.com/earshot-dev/earshot/ingest/dtmf/dtmftest"
	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
	"github.com/zaf/g711"
)

// inbandSession is a started session with no recogniser and no door,
// in-band DTMF on as pci.inband_dtmf asks, recording to a file in dir.
func inbandSession(t *testing.T, f media.Format, on bool) *session {
	t.Helper()
	s := pauseSession(f)
	s.svc = &Service{cfg: Config{MaxFrameBytes: 1 << 20}}
	s.p.MessagesConfig.ReceiveDTMFEvents = true
	s.p.PCI.InbandDTMF = on
	s.p.Encoding, s.p.SampleRate, s.p.BitDepth = map[media.Encoding]string{media.MuLaw: "wav/ulaw", media.ALaw: "wav/alaw", media.LinearPCM: "wav/pcm"}[f.Encoding], f.SampleRate, f.BitDepth
	rec, err := createRecording(filepath.Join(t.TempDir(), "rec.wav"), f)
	if err != nil {
		t.Fatal(err)
	}
	s.rec = rec
	t.Cleanup(rec.close)
	rate := 16000
	if on && s.p.InbandFormat() {
		if s.inband, err = newInband(f); err != nil {
			t.Fatal(err)
		}
		rate = f.SampleRate
	}
	if s.framer, err = media.NewFramer(f, rate); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestInbandRecording: keys mixed into real speech, written to a session
// as a call's door writes them (20 ms at a time, in the session's
// encoding), are dtmf messages (source inband, masked, at the tone's
// onset) and are silence in the stored recording, which keeps the
// timeline and every other byte; with pci.inband_dtmf off the tones are
// stored as they came.
func TestInbandRecording(t *testing.T) {
	clip := recognizertest.SpeechDir(t) + "/librivox-sense-and-sensibility-01-0870.wav"
	for _, f := range []media.Format{
		{Encoding: media.MuLaw, BitDepth: 8, SampleRate: 8000, Channels: 1},
		{Encoding: media.ALaw, BitDepth: 8, SampleRate: 8000, Channels: 1},
		{Encoding: media.LinearPCM, BitDepth: 16, SampleRate: 16000, Channels: 1},
	} {
		pcm, err := dtmftest.Speech(t.Context(), clip, f.SampleRate, false)
		if err != nil {
			t.Fatal(err)
		}
		dtmftest.Scale(pcm, -20)
		placed := dtmftest.Sequence(pcm, f.SampleRate, "4111", dtmftest.Spec{Samples: f.SampleRate / 10, Low: -7, High: -5}, f.SampleRate, f.SampleRate*3/4)
		in := encode(f, pcm)
		for _, on := range []bool{true, false} {
			s := inbandSession(t, f, on)
			step := f.SampleRate / 50 * f.FrameSize()
			for i := 0; i < len(in); i += step {
				if err := s.write(0, false, in[i:min(i+step, len(in))]); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.drainInband(); err != nil {
				t.Fatal(err)
			}
			path, err := s.rec.finalize(f)
			if err != nil {
				t.Fatal(err)
			}
			stored := readRecording(t, path)
			if len(stored) != len(in) {
				t.Fatalf("%v: %d bytes stored of %d", f.Encoding, len(stored), len(in))
			}
			got := dtmfMessages(t, s)
			if !on {
				if len(got) != 0 || string(stored) != string(in) {
					t.Errorf("%v off: %d keys, recording changed %v", f.Encoding, len(got), string(stored) != string(in))
				}
				continue
			}
			if len(got) != len(placed) {
				t.Fatalf("%v: %d dtmf messages for %d keys", f.Encoding, len(got), len(placed))
			}
			back := decode(f, stored)
			muted := make([]bool, len(pcm))
			for i, p := range placed {
				if d := got[i]; d.Source != ingest.KeyInband || !d.Masked || d.Digit != nil || abs(d.Time-float64(p.Start)/float64(f.SampleRate)) > 0.01 {
					t.Errorf("%v key %d: %+v, tone at %.3f s", f.Encoding, i, d, float64(p.Start)/float64(f.SampleRate))
				}
				span := back[p.Start : p.Start+p.Samples]
				lo, hi, _ := dtmf.Frequencies(p.Digit)
				if l, h := dtmftest.Level(span, f.SampleRate, lo), dtmftest.Level(span, f.SampleRate, hi); max(l, h) > -60 {
					t.Errorf("%v key %d: tones at %.1f and %.1f dBm0 in the recording", f.Encoding, i, l, h)
				}
				for j := p.Start - f.SampleRate/40; j < p.Start+p.Samples+f.SampleRate/40; j++ {
					muted[j] = true
				}
			}
			changed := 0
			for i := range pcm {
				if !muted[i] && back[i] != decode(f, in[i*f.FrameSize():(i+1)*f.FrameSize()])[0] {
					changed++
				}
			}
			if changed > 0 {
				t.Errorf("%v: %d samples changed away from the tones", f.Encoding, changed)
			}
		}
	}
}

func abs(x float64) float64 { return max(x, -x) }

// encode is pcm in f's encoding (mono).
func encode(f media.Format, pcm []int16) []byte {
	var b []byte
	for _, x := range pcm {
		b = encodeSample(b, f.Encoding, x)
	}
	return b
}

// decode is the samples of b in f's encoding (mono).
func decode(f media.Format, b []byte) []int16 {
	var out []int16
	switch f.Encoding {
	case media.MuLaw:
		for _, c := range b {
			out = append(out, g711.DecodeUlawFrame(c))
		}
	case media.ALaw:
		for _, c := range b {
			out = append(out, g711.DecodeAlawFrame(c))
		}
	default:
		for i := 0; i+1 < len(b); i += 2 {
			out = append(out, int16(binary.LittleEndian.Uint16(b[i:])))
		}
	}
	return out
}

// readRecording is a finalised recording's audio bytes.
func readRecording(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b[media.WAVHeaderSize:]
}
