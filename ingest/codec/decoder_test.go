package codec

import (
	"math"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/earshot-dev/earshot/ingest/codec/codectest"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// speechFile is a testdata clip (real speech, 16 kHz); ffmpeg encodes it.
func speechFile(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Fatal("needs ffmpeg (make deps)")
	}
	return filepath.Join(recognizertest.SpeechDir(t), "pocketsphinx-goforward.wav")
}

// snr is the best signal-to-noise ratio (dB) of got against ref over lags
// 0..maxLag (codec delay).
func snr(ref, got []int16, maxLag int) (float64, int) {
	best, bestLag := math.Inf(-1), 0
	for lag := 0; lag <= maxLag; lag++ {
		var sig, noise float64
		for i := 0; i+lag < len(got) && i < len(ref); i++ {
			r, g := float64(ref[i]), float64(got[i+lag])
			sig += r * r
			noise += (r - g) * (r - g)
		}
		if s := 10 * math.Log10(sig/max(noise, 1)); s > best {
			best, bestLag = s, lag
		}
	}
	return best, bestLag
}

// TestG722 decodes ffmpeg's G.722 encoding of real speech, 160 bytes (20 ms)
// at a time as RTP carries it, and compares with the speech itself.
func TestG722(t *testing.T) {
	speech := speechFile(t)
	ref, err := codectest.PCM16k(speech)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := codectest.G722(speech)
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDecoder(G722)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var got []int16
	for i := 0; i < len(enc); i += 160 {
		if got, err = d.Decode(enc[i:min(i+160, len(enc))], got); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 2*len(enc) {
		t.Fatalf("%d bytes decoded to %d samples, want 2 a byte", len(enc), len(got))
	}
	s, lag := snr(ref, got, 64)
	t.Logf("G.722: SNR %.1f dB at a delay of %d samples", s, lag)
	if s < 15 {
		t.Errorf("G.722 decode SNR %.1f dB < 15 dB: not the speech", s)
	}
	// Silence padding (codec.G722.Silence) after speech settles to near zero.
	pad := make([]byte, 160)
	for i := range pad {
		pad[i] = G722.Silence()
	}
	tail, _ := d.Decode(pad, nil)
	peak := 0
	for _, v := range tail[160:] { // after 5 ms
		peak = max(peak, int(math.Abs(float64(v))))
	}
	if peak > 64 {
		t.Errorf("G.722 silence byte decodes to peaks of %d after 5 ms", peak)
	}
}

// TestOpus decodes libopus packets (as Chromium sends: 20 ms, voice,
// 32 kbit/s and a low 12 kbit/s) to 16 kHz and compares with the speech.
func TestOpus(t *testing.T) {
	speech := speechFile(t)
	ref, err := codectest.PCM16k(speech)
	if err != nil {
		t.Fatal(err)
	}
	for _, bitrate := range []int{32000, 12000} {
		pkts, err := codectest.OpusPackets(speech, bitrate)
		if err != nil {
			t.Fatal(err)
		}
		d, err := NewDecoder(Opus)
		if err != nil {
			t.Fatal(err)
		}
		var got []int16
		for _, p := range pkts {
			n := len(got)
			if got, err = d.Decode(p, got); err != nil {
				t.Fatal(err)
			}
			if len(got)-n != 320 {
				t.Fatalf("a 20 ms packet decoded to %d samples, want 320", len(got)-n)
			}
		}
		// A lost packet is concealed: 20 ms more.
		if got2, err := d.Decode(nil, got); err != nil || len(got2) != len(got)+320 {
			t.Errorf("loss concealment: %d samples, %v", len(got2)-len(got), err)
		}
		d.Close()
		s, lag := snr(ref, got, 400)
		t.Logf("Opus %d bit/s: %d packets, SNR %.1f dB at a delay of %d samples", bitrate, len(pkts), s, lag)
		if s < 3 {
			t.Errorf("Opus decode SNR %.1f dB < 3 dB: not the speech", s)
		}
	}
}

// TestCorruptPayloads: a truncated or garbled Opus packet is refused with
// the decoder still usable; G.722 takes any byte.
func TestCorruptPayloads(t *testing.T) {
	d, err := NewDecoder(Opus)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	bad := [][]byte{{0xFF}, {0x03}, {0x03, 0xFF, 0xFF}, make([]byte, 1501)}
	for _, p := range bad {
		out, err := d.Decode(p, []int16{7})
		if err == nil && len(out)-1 > 16000*120/1000 {
			t.Errorf("payload %x: %d samples", p[:min(len(p), 4)], len(out)-1)
		}
		if err != nil && (len(out) != 1 || out[0] != 7) {
			t.Errorf("a refused payload changed the output: %v", out)
		}
	}
	if got, err := d.Decode([]byte{0xF8, 0xFF, 0xFE}, nil); err != nil || len(got) != 320 {
		t.Errorf("after bad packets a valid one decodes to %d samples, %v", len(got), err)
	}
}

// FuzzDecoders: random payloads never crash either decoder nor make it
// return more than one packet's worth of samples.
func FuzzDecoders(f *testing.F) {
	f.Add([]byte{0xF8, 0xFF, 0xFE}, uint64(1))
	f.Add([]byte{0x03, 0x03, 0x00}, uint64(2))
	f.Add(make([]byte, 160), uint64(3))
	opusDec, err := NewDecoder(Opus)
	if err != nil {
		f.Fatal(err)
	}
	g722Dec, err := NewDecoder(G722)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { opusDec.Close(); g722Dec.Close() })
	f.Fuzz(func(t *testing.T, b []byte, seed uint64) {
		// The stateful decoders see the corpus in sequence, as a stream
		// would; a seed-driven split makes packet boundaries vary too.
		r := rand.New(rand.NewPCG(seed, seed))
		for len(b) > 0 {
			n := min(len(b), 1+r.IntN(1600))
			p := b[:n]
			b = b[n:]
			if out, err := opusDec.Decode(p, nil); err == nil && len(out) > 16000*120/1000 {
				t.Fatalf("opus: %d bytes gave %d samples", len(p), len(out))
			}
			out, err := g722Dec.Decode(p, nil)
			if err != nil || len(out) != 2*len(p) {
				t.Fatalf("g722: %d bytes gave %d samples, %v", len(p), len(out), err)
			}
		}
	})
}
