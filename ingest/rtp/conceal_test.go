package rtp

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/zaf/g711"

	"github.com/earshot-dev/earshot/ingest/codec"
	"github.com/earshot-dev/earshot/ingest/codec/codectest"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// callThrough plays two channels of byte-stream audio (160 bytes a
// packet) through a mixer and a concealer as a Receiver does, one 20 ms
// tick at a time: channel 0 loses the packets lost marks (the jitter
// buffer's lost gap fill), channel 1 loses none. It returns the
// concealer's output.
func callThrough(t *testing.T, c codec.Codec, ch0, ch1 []byte, lost []bool) []byte {
	t.Helper()
	var s sink
	k, err := newConcealer(&s, c, 2, true)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	m := newMixer(2, c.Silence())
	for p := range lost {
		a, e := p*160, min((p+1)*160, len(ch0))
		if lost[p] {
			m.ch[0].fill(e-a, math.MaxInt64, true)
		} else {
			m.ch[0].audio(ch0[a:e])
		}
		m.ch[1].audio(ch1[a:e])
		b, l := m.take()
		if err := k.write(t.Context(), append([]byte(nil), b...), append([]byte(nil), l...)); err != nil {
			t.Fatal(err)
		}
	}
	return s.bytes()
}

// level is the mean square of pcm, at least 1 (one LSB squared).
func level(pcm []int16) float64 {
	var e float64
	for _, v := range pcm {
		e += float64(v) * float64(v)
	}
	return max(e/float64(max(len(pcm), 1)), 1)
}

// levelMiss is the mean over the lost packets (only the first of each
// burst when first) of how far in dB the level of got is from want's
// (spp samples a packet).
func levelMiss(want, got []int16, spp int, lost []bool, first bool) float64 {
	var miss float64
	n := 0
	for p := range lost {
		if lost[p] && (!first || p == 0 || !lost[p-1]) {
			a, e := p*spp, min((p+1)*spp, len(want))
			miss += math.Abs(10 * math.Log10(level(want[a:e])/level(got[a:e])))
			n++
		}
	}
	return miss / float64(n)
}

func speech8k(t *testing.T) []int16 {
	t.Helper()
	pcm, err := codectest.PCM8k(filepath.Join(recognizertest.SpeechDir(t), "ls-test-clean-1089-134686-0000.wav"))
	if err != nil {
		t.Fatal(err)
	}
	return pcm
}

// TestConcealPCMU: a SIPREC call in mu-law whose channel 0 loses bursts
// of packets of real speech: the lost spans are spandsp's fill encoded in
// mu-law, at a level far closer to the lost speech's than the silence
// bytes they were before; the length and alignment are unchanged, the
// channel without loss passes byte for byte, and the lossy channel's
// received bytes too except the quarter pitch period (at most 30 samples)
// blended after each loss.
func TestConcealPCMU(t *testing.T) {
	pcm := speech8k(t)
	mu := make([]byte, len(pcm))
	for i, v := range pcm {
		mu[i] = g711.EncodeUlawFrame(v)
	}
	other := make([]byte, len(mu))
	for i := range other {
		other[i] = mu[len(mu)-1-i]
	}
	lost := codectest.BurstLoss((len(mu) + 159) / 160)
	out := callThrough(t, codec.PCMU, mu, other, lost)
	if len(out) != 2*len(mu) {
		t.Fatalf("%d bytes out of 2 channels of %d", len(out), len(mu))
	}
	var got, was, silent []int16
	for i := range mu {
		if out[2*i+1] != other[i] {
			t.Fatalf("channel 1 byte %d changed: %#x, was %#x", i, out[2*i+1], other[i])
		}
		got = append(got, g711.DecodeUlawFrame(out[2*i]))
		was = append(was, g711.DecodeUlawFrame(mu[i]))
		if lost[i/160] {
			silent = append(silent, g711.DecodeUlawFrame(codec.PCMU.Silence()))
		} else {
			silent = append(silent, was[i])
		}
		if !lost[i/160] && (i/160 == 0 || !lost[i/160-1] || i%160 >= 30) && out[2*i] != mu[i] {
			t.Fatalf("received byte %d changed: %#x, was %#x", i, out[2*i], mu[i])
		}
	}
	miss, silence := levelMiss(was, got, 160, lost, false), levelMiss(was, silent, 160, lost, false)
	t.Logf("lost packets: level off by %.1f dB on average, silence bytes by %.1f dB", miss, silence)
	if miss > silence/2 {
		t.Errorf("concealed level off by %.1f dB, silence by %.1f dB: want at most half", miss, silence)
	}
}

// TestConcealG722: the same losses in a G.722 call reach the decoder as
// losses: its output there is the fill (two samples a byte), at a level
// far closer to the lost speech's than what the decoder made of the
// silence bytes (on the first lost packet of a burst: at 16 kHz the fill
// fades out within 25 ms); the channel without loss decodes as it would
// alone, and the output has two samples a byte a channel.
func TestConcealG722(t *testing.T) {
	g, err := codectest.G722(filepath.Join(recognizertest.SpeechDir(t), "ls-test-clean-1089-134686-0000.wav"))
	if err != nil {
		t.Fatal(err)
	}
	other := make([]byte, len(g))
	for i := range other {
		other[i] = g[len(g)-1-i]
	}
	lost := codectest.BurstLoss((len(g) + 159) / 160)
	decode := func(b []byte) []int16 {
		d, err := codec.NewDecoder(codec.G722)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		pcm, err := d.Decode(b, nil)
		if err != nil {
			t.Fatal(err)
		}
		return pcm
	}
	was, ref1 := decode(g), decode(other)
	// Before: the decoder was fed the silence bytes.
	filled := append([]byte(nil), g...)
	for i := range filled {
		if lost[i/160] {
			filled[i] = codec.G722.Silence()
		}
	}
	silent := decode(filled)
	out := callThrough(t, codec.G722, g, other, lost)
	if len(out) != 2*2*2*len(g) {
		t.Fatalf("%d bytes out of 2 channels of %d G.722 bytes, want %d", len(out), len(g), 8*len(g))
	}
	var got []int16
	for i := 0; i < len(out); i += 4 {
		got = append(got, int16(binary.LittleEndian.Uint16(out[i:])))
		if v := int16(binary.LittleEndian.Uint16(out[i+2:])); v != ref1[i/4] {
			t.Fatalf("channel 1 sample %d is %d, alone %d", i/4, v, ref1[i/4])
		}
	}
	miss, silence := levelMiss(was, got, 320, lost, true), levelMiss(was, silent, 320, lost, true)
	all, allSilence := levelMiss(was, got, 320, lost, false), levelMiss(was, silent, 320, lost, false)
	t.Logf("first lost packet of each burst: level off by %.1f dB on average, decoded silence bytes by %.1f dB; all lost packets %.1f and %.1f dB", miss, silence, all, allSilence)
	if miss > silence-3 {
		t.Errorf("concealed level off by %.1f dB, silence bytes by %.1f dB: want 3 dB closer at least", miss, silence)
	}
	// After the loss the decoder resumes from the state the silence bytes
	// left, as before (decoded from a state 60 ms stale instead, the
	// packet after a loss came out up to 28 dB over the speech's level).
	for p := range lost {
		if p > 0 && lost[p-1] && !lost[p] {
			a := p * 320
			for i := a + 2*30; i < min(a+320, len(silent)); i++ {
				if got[i] != silent[i] {
					t.Fatalf("sample %d after a loss: %d, the decoder fed the silence bytes made %d", i, got[i], silent[i])
				}
			}
		}
	}
}

// TestMixerMarksLossOnly: only gap fills of lost packets are marked, and
// only the silence a fill adds (not what pads already put ahead); marks
// come out interleaved as the audio, nil when no frame taken is lost; a
// channel's marks are bounded and dropped with its bytes.
func TestMixerMarksLossOnly(t *testing.T) {
	m := newMixer(2, 0xFF)
	m.ch[0].audio([]byte{1, 2})
	m.ch[0].fill(2, math.MaxInt64, true)
	m.ch[0].fill(1, math.MaxInt64, false) // silence suppression: no loss
	m.ch[1].audio([]byte{9, 9, 9, 9, 9})
	b, l := m.take()
	if !bytes.Equal(b, []byte{1, 9, 2, 9, 0xFF, 9, 0xFF, 9, 0xFF, 9}) || !bytes.Equal(l, []byte{0, 0, 0, 0, 1, 0, 1, 0, 0, 0}) {
		t.Fatalf("take: %v marks %v", b, l)
	}
	m.padTo(1, m.frames+3) // channel 1 quiet: 3 frames ahead of its clock
	m.ch[1].fill(5, math.MaxInt64, true)
	m.ch[0].audio(make([]byte, 5))
	if _, l := m.take(); !bytes.Equal(l, []byte{0, 0, 0, 0, 0, 0, 0, 1, 0, 1}) {
		t.Fatalf("a loss after pads: marks %v, want the 2 frames past the debt", l)
	}
	m.ch[0].audio([]byte{3})
	m.ch[1].audio([]byte{4})
	if _, l := m.take(); l != nil {
		t.Fatalf("marks %v for frames with no loss", l)
	}
	m.ch[0].fill(maxPending+100, math.MaxInt64, true)
	if c := m.ch[0]; len(c.lost) != len(c.pending) || len(c.pending) != maxPending {
		t.Fatalf("after a fill past maxPending: %d bytes, %d marks, want %d", len(c.pending), len(c.lost), maxPending)
	}
}

// TestConcealBoundsAndStart: a loss at the start of a call (no history)
// is silence, a loss of 10 s (maxPending) is written in full and ends in
// silence, and the channels stay aligned; nothing panics.
func TestConcealBoundsAndStart(t *testing.T) {
	for _, c := range []codec.Codec{codec.PCMU, codec.PCMA, codec.G722} {
		var s sink
		k, err := newConcealer(&s, c, 2, true)
		if err != nil {
			t.Fatal(err)
		}
		m := newMixer(2, c.Silence())
		m.ch[0].fill(160, math.MaxInt64, true)
		m.ch[1].audio(bytes.Repeat([]byte{0x55}, 160))
		m.ch[0].audio(bytes.Repeat([]byte{0x55}, 160))
		m.ch[0].fill(maxPending, math.MaxInt64, true)
		m.ch[1].fill(maxPending, math.MaxInt64, true)
		b, l := m.take()
		if err := k.write(context.Background(), b, l); err != nil {
			t.Fatal(err)
		}
		k.Close()
		out := s.bytes()
		frames := len(out) / 2
		if c == codec.G722 {
			frames = len(out) / 8
		}
		if frames != maxPending || len(out)%2 != 0 {
			t.Fatalf("%s: %d bytes out, %d frames, want %d", c, len(out), frames, maxPending)
		}
		if c != codec.G722 && out[0] != c.Silence() && out[0] != g711.EncodeUlawFrame(0) {
			t.Errorf("%s: a loss before any audio is %#x, not silence", c, out[0])
		}
		tail := out[len(out)-64:]
		if c == codec.G722 {
			if !bytes.Equal(tail, make([]byte, 64)) {
				t.Errorf("%s: the end of a 10 s loss is not silence: %v", c, tail)
			}
		} else {
			if !bytes.Equal(tail, bytes.Repeat([]byte{c.Silence()}, 64)) && !bytes.Equal(tail, bytes.Repeat([]byte{g711.EncodeUlawFrame(0)}, 64)) {
				t.Errorf("%s: the end of a 10 s loss is not silence: %x", c, tail)
			}
		}
	}
}

// TestReceiverConcealsLoss: through a Receiver, three packets of real
// mu-law speech that never come are concealed (not silence bytes), the
// call keeps its length, and the other packets pass as they came but for
// the blend after the loss; with jitter.conceal: silence they are silence
// bytes as before.
func TestReceiverConcealsLoss(t *testing.T) {
	got, mu := lossyCall(t, JitterConfig{})
	if lostSpan := got[20*160 : 23*160]; bytes.Count(lostSpan, []byte{codec.PCMU.Silence()}) > len(lostSpan)/2 {
		t.Fatalf("the lost packets are mostly silence bytes: %x", lostSpan[:64])
	}
	for i := range mu {
		if (i < 20*160 || i >= 23*160+30) && got[i] != mu[i] {
			t.Fatalf("byte %d: %#x, sent %#x", i, got[i], mu[i])
		}
	}
	// jitter.conceal: silence keeps the silence bytes, the rest as sent.
	got, mu = lossyCall(t, JitterConfig{Conceal: ConcealSilence})
	for i := range mu {
		want := mu[i]
		if i >= 20*160 && i < 23*160 {
			want = codec.PCMU.Silence()
		}
		if got[i] != want {
			t.Fatalf("conceal: silence: byte %d: %#x, want %#x", i, got[i], want)
		}
	}
}

func TestConcealConfig(t *testing.T) {
	for _, v := range []string{"", ConcealPLC, ConcealSilence, "comfort"} {
		c := JitterConfig{Conceal: v}
		c.SetDefaults()
		if err := c.Validate(); (err != nil) != (v == "comfort") {
			t.Errorf("conceal %q: %v", v, err)
		}
	}
}

// lossyCall sends 50 packets of real mu-law speech to a Receiver but for
// packets 20-22 and returns what it wrote and what was sent.
func lossyCall(t *testing.T, jc JitterConfig) (got, sent []byte) {
	t.Helper()
	pcm := speech8k(t)[8000 : 8000+160*50]
	mu := make([]byte, len(pcm))
	for i, v := range pcm {
		mu[i] = g711.EncodeUlawFrame(v)
	}
	pair := listen(t, 1)[0]
	r, err := NewReceiver(ReceiverConfig{Codec: codec.PCMU, Jitter: jc}, []Stream{{Pair: pair, Codecs: map[uint8]codec.Codec{0: codec.PCMU}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := start(t, r)
	conn := dial(t, pair)
	ps := packets(t, mu, 0, 1)
	paced(2*time.Millisecond, len(ps), func(i int) {
		if i < 20 || i > 22 {
			conn.Write(ps[i])
		}
	})
	got = g.until(has(len(mu)))
	if len(got) != len(mu) {
		t.Fatalf("%d bytes out of %d; stats %+v", len(got), len(mu), r.Stats())
	}
	if st := r.Stats()[0].Jitter; st.Lost != 3 {
		t.Fatalf("jitter stats %+v, want 3 lost", st)
	}
	return got, mu
}

// TestConcealPCMUNoiseFloor: a 120 ms loss inside mu-law speech is
// concealed without digital silence (the G.711 concealer ends its fill in
// plc's noise floor, bench/CALLS.md "3 % loss, word by word"): no 10 ms
// of the lost span decodes to zeros only.
func TestConcealPCMUNoiseFloor(t *testing.T) {
	pcm := speech8k(t)[:8000*3]
	mu := make([]byte, len(pcm))
	for i, v := range pcm {
		mu[i] = g711.EncodeUlawFrame(v)
	}
	// Six packets lost from the loudest stretch.
	at, best := 0, 0.0
	for p := 10; p+8 < len(pcm)/160; p++ {
		if l := level(pcm[p*160 : (p+6)*160]); l > best {
			at, best = p, l
		}
	}
	lost := make([]bool, len(pcm)/160)
	for p := at; p < at+6; p++ {
		lost[p] = true
	}
	out := callThrough(t, codec.PCMU, mu, mu, lost)
	for f := at * 160; f < (at+6)*160; f += 80 {
		zeros := true
		for i := f; i < f+80; i++ {
			if g711.DecodeUlawFrame(out[2*i]) != 0 {
				zeros = false
				break
			}
		}
		if zeros {
			t.Fatalf("10 ms at sample %d of the 120 ms loss (from %d) is digital silence", f, at*160)
		}
	}
}
