package live

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
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
	s.svc = &Service{cfg: Config{SocketLimits: ingest.SocketLimits{MaxFrameBytes: 1 << 20}}}
	s.p.MessagesConfig.ReceiveDTMFEvents = true
	s.p.PCI.InbandDTMF = on
	s.p.Encoding, s.p.SampleRate, s.p.BitDepth = map[media.Encoding]string{media.MuLaw: "wav/ulaw", media.ALaw: "wav/alaw", media.LinearPCM: "wav/pcm"}[f.Encoding], f.SampleRate, f.BitDepth
	rec, err := createRecording(blobFiles{}, filepath.Join(t.TempDir(), "rec.wav"), f)
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
// timeline and every other byte as it came (mu-law's second code for 0
// included); with pci.inband_dtmf off the tones are
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
		if f.Encoding == media.MuLaw {
			// mu-law's other code for 0, which an encoder may write: kept
			// as it came, so a reconnected client's resend matches.
			for i := 7; i < len(in); i += 101 {
				in[i] = 0x7f
			}
		}
		for _, on := range []bool{true, false} {
			s := inbandSession(t, f, on)
			feed(t, s, 0, in, f.SampleRate/50*f.FrameSize())
			stored := endRecording(t, s)
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
				at := i * f.FrameSize()
				if !muted[i] && string(stored[at:at+f.FrameSize()]) != string(in[at:at+f.FrameSize()]) {
					changed++
				}
			}
			if changed > 0 {
				t.Errorf("%v: %d samples' bytes changed away from the tones", f.Encoding, changed)
			}
		}
	}
}

func abs(x float64) float64 { return max(x, -x) }

// feed writes in to the session's attachment gen, step bytes at a time.
func feed(t *testing.T, s *session, gen int, in []byte, step int) {
	t.Helper()
	for i := 0; i < len(in); i += step {
		if err := s.write(gen, false, in[i:min(i+step, len(in))]); err != nil {
			t.Fatal(err)
		}
	}
}

// endRecording drains the filters, finalises the recording and returns its
// audio bytes.
func endRecording(t *testing.T, s *session) []byte {
	t.Helper()
	if err := s.drainInband(); err != nil {
		t.Fatal(err)
	}
	path, err := s.rec.finalize(s.format)
	if err != nil {
		t.Fatal(err)
	}
	return readRecording(t, path)
}

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

// TestInbandKeysOnce: a tone on both channels of a recorded call (the
// other leg hearing it as echo, 20 dB down) is one key; once a key came
// from the door (RFC 4733), the in-band ones are not keys any more (a
// device sending both would double every key), and their tones are still
// removed.
func TestInbandKeysOnce(t *testing.T) {
	f := media.Format{Encoding: media.MuLaw, BitDepth: 8, SampleRate: 8000, Channels: 2}
	tones := func(keys string, level float64) []int16 {
		pcm := make([]int16, 8000*4)
		dtmftest.Sequence(pcm, 8000, keys, dtmftest.Spec{Samples: 800, Low: level - 2, High: level}, 4000, 8000)
		return pcm
	}
	caller, agent := tones("1234", -5), tones("1234", -25)
	var in []byte
	for i := range caller {
		in = encodeSample(in, f.Encoding, caller[i])
		in = encodeSample(in, f.Encoding, agent[i])
	}
	s := inbandSession(t, f, true)
	feed(t, s, 0, in, 320)
	endRecording(t, s)
	if got := dtmfMessages(t, s); len(got) != 4 {
		t.Errorf("%d dtmf messages for 4 keys on two channels: %+v", len(got), got)
	}

	s = inbandSession(t, f, true)
	feed(t, s, 0, in[:len(in)/2], 320) // keys 1 and 2
	s.key(ingest.Key{Digit: '3', Duration: 0.1, Source: ingest.KeyRFC4733}, -1)
	feed(t, s, 0, in[len(in)/2:], 320) // keys 3 and 4, also sent out of band
	stored := decode(media.Format{Encoding: media.MuLaw}, endRecording(t, s))
	got := dtmfMessages(t, s)
	var sources []string
	for _, d := range got {
		sources = append(sources, d.Source)
	}
	if len(got) != 3 || sources[0] != ingest.KeyInband || sources[1] != ingest.KeyInband || sources[2] != ingest.KeyRFC4733 {
		t.Errorf("sources %v, want the two in-band keys before the door's, then none", sources)
	}
	for i, at := range []int{4000, 12000, 20000, 28000} {
		span := make([]int16, 0, 800)
		for j := at; j < at+800; j++ {
			span = append(span, stored[2*j])
		}
		lo, hi, _ := dtmf.Frequencies("1234"[i])
		if l, h := dtmftest.Level(span, 8000, lo), dtmftest.Level(span, 8000, hi); max(l, h) > -60 {
			t.Errorf("the caller's tone at %d is at %.1f and %.1f dBm0 in the recording", at, l, h)
		}
	}
}

// TestInbandPauseSequence: keys typed as tones spell pci.pause_sequence:
// the session pauses once the key that completes it was stored, so what
// came before it is kept and what follows is silence.
func TestInbandPauseSequence(t *testing.T) {
	f := media.Format{Encoding: media.MuLaw, BitDepth: 8, SampleRate: 8000, Channels: 1}
	s := inbandSession(t, f, true)
	s.p.PCI.PauseSequence, s.p.PCI.ResumeSequence = "*1", "#1"
	pcm := make([]int16, 8000*3)
	for i := range pcm {
		pcm[i] = int16(3000 * math.Sin(float64(i)*0.3)) // a 382 Hz hum, no key
	}
	dtmftest.Sequence(pcm, 8000, "*1", dtmftest.Spec{Samples: 800, Low: -7, High: -5}, 4000, 2400)
	feed(t, s, 0, encode(f, pcm), 160)
	stored := decode(f, endRecording(t, s))
	if !s.paused || len(s.spans) != 1 {
		t.Fatalf("paused %v, spans %v: want paused by the keys", s.paused, s.spans)
	}
	// The second key ends at 0.9 s: the pause comes 25 ms later at the
	// earliest, when the filter knows it ended, and within 0.1 s.
	if at := s.spans[0].Start; at < 0.9 || at > 1.0 {
		t.Errorf("paused at %.3f s, the sequence's last tone ended at 0.9 s", at)
	}
	hum := func(from, to int) int {
		n := 0
		for _, x := range stored[from:to] {
			if x != 0 {
				n++
			}
		}
		return n
	}
	if n := hum(4000, 4800) + hum(6400, 7200); n != 0 {
		t.Errorf("%d samples of the tones kept", n)
	}
	// The hum between the tones' removal (a block past the last) and the
	// pause is kept.
	pausedAt := int(s.spans[0].Start * 8000)
	t.Logf("paused at %.3f s, %d samples after the second tone", s.spans[0].Start, pausedAt-7200)
	if n := hum(7200+250, pausedAt); n < pausedAt-7200-250-10 {
		t.Errorf("the hum after the tones, before the pause at %d, lost: %d of %d samples kept", pausedAt, n, pausedAt-7450)
	}
	if n := hum(pausedAt, len(stored)); n != 0 {
		t.Errorf("%d samples of the hum stored after the pause", n)
	}
}

// TestInbandReconnect: a WebSocket client with pci.inband_dtmf that
// reconnects resends from its last ack; the filter's held audio is stored
// first, so the resend matches the stored tail and is dropped: the
// recording is the audio once, byte for byte, and the key before the
// break is one message.
func TestInbandReconnect(t *testing.T) {
	f := media.Format{Encoding: media.MuLaw, BitDepth: 8, SampleRate: 8000, Channels: 1}
	pcm, err := dtmftest.Speech(t.Context(), recognizertest.SpeechDir(t)+"/librivox-sense-and-sensibility-01-0870.wav", 8000, false)
	if err != nil {
		t.Fatal(err)
	}
	dtmftest.Scale(pcm, -20)
	dtmftest.Sequence(pcm, 8000, "7", dtmftest.Spec{Samples: 800, Low: -7, High: -5}, 8000, 8000)
	in := encode(f, pcm)
	s := inbandSession(t, f, true)
	cut, resend := 3*8000+123, 3*8000-4000 // the break, and the client's last ack
	feed(t, s, 0, in[:cut], 160)
	gen, err := s.onAttach(nil)
	if err != nil {
		t.Fatal(err)
	}
	feed(t, s, gen, in[resend:], 160)
	stored := endRecording(t, s)
	if len(stored) != len(in) {
		t.Fatalf("%d bytes stored for %d sent once (and %d resent)", len(stored), len(in), cut-resend)
	}
	tone := string(stored[8000:8800])
	if tone != strings.Repeat("\xff", 800) || string(stored[:7700]) != string(in[:7700]) || string(stored[9100:]) != string(in[9100:]) {
		t.Error("the recording is not the audio once, the tone silenced")
	}
	if got := dtmfMessages(t, s); len(got) != 1 {
		t.Errorf("%d dtmf messages for one key", len(got))
	}
}
