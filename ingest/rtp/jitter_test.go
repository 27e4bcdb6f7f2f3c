package rtp

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"
	"time"
)

// collector records a jitter buffer's output as bytes, silence as 0xFF,
// silence for lost packets as 0xFE.
type collector struct{ out []byte }

func (c *collector) emit(audio []byte, silence int, lost bool) {
	c.out = append(c.out, audio...)
	s := byte(0xFF)
	if lost {
		s = 0xFE
	}
	c.out = append(c.out, bytes.Repeat([]byte{s}, silence)...)
}

// frame is packet i's payload: 160 bytes of value i (never 0xFE or 0xFF).
func frame(i int) []byte { return bytes.Repeat([]byte{byte(i % 200)}, 160) }

func pkt(seq uint16, i int) Packet {
	return Packet{Seq: seq, Timestamp: uint32(1000 + 160*i), Payload: frame(i)}
}

// expect builds the output for packet indexes, -1 meaning a silent frame,
// -2 a frame of a lost packet.
func expect(idx ...int) []byte {
	var b []byte
	for _, i := range idx {
		if i < 0 {
			b = append(b, bytes.Repeat([]byte{byte(0x100 + i)}, 160)...)
		} else {
			b = append(b, frame(i)...)
		}
	}
	return b
}

func TestJitter(t *testing.T) {
	t0 := time.Unix(1000, 0)
	cases := []struct {
		name  string
		order []int // packet indexes in arrival order, one every 20 ms
		base  uint16
		want  []byte
		stats JitterStats
	}{
		{"in order", []int{0, 1, 2, 3}, 10, expect(0, 1, 2, 3), JitterStats{Released: 4}},
		{"reordered", []int{0, 2, 1, 4, 3, 5}, 10, expect(0, 1, 2, 3, 4, 5), JitterStats{Released: 6}},
		{"loss becomes silence marked lost", []int{0, 1, 3, 4, 5, 6, 7, 8, 9}, 10, expect(0, 1, -2, 3, 4, 5, 6, 7, 8, 9), JitterStats{Released: 9, Lost: 1}},
		{"duplicates after release dropped", []int{0, 1, 1, 2, 2, 3}, 10, expect(0, 1, 2, 3), JitterStats{Released: 4, Late: 2}},
		{"duplicate while held dropped", []int{0, 2, 2, 1, 3}, 10, expect(0, 1, 2, 3), JitterStats{Released: 4, Duplicate: 1}},
		{"late packet dropped", []int{0, 2, 3, 4, 5, 6, 7, 1, 8}, 10, expect(0, -2, 2, 3, 4, 5, 6, 7, 8), JitterStats{Released: 8, Lost: 1, Late: 1}},
		{"sequence wraps", []int{0, 1, 2, 3}, 65534, expect(0, 1, 2, 3), JitterStats{Released: 4}},
		{"burst loss", []int{0, 4, 5, 6, 7, 8, 9}, 10, expect(0, -2, -2, -2, 4, 5, 6, 7, 8, 9), JitterStats{Released: 7, Lost: 3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j := NewJitter(JitterConfig{})
			var col collector
			now := t0
			for _, i := range c.order {
				j.Push(pkt(c.base+uint16(i), i), now, col.emit)
				j.Pop(now, col.emit)
				now = now.Add(20 * time.Millisecond)
			}
			j.Flush(col.emit)
			if !bytes.Equal(col.out, c.want) {
				t.Errorf("output %d bytes, want %d: got frames %v", len(col.out), len(c.want), frames(col.out))
			}
			if s := j.Stats(); s != c.stats {
				t.Errorf("stats %+v, want %+v", s, c.stats)
			}
		})
	}
}

func frames(b []byte) []int {
	var out []int
	for i := 0; i < len(b); i += 160 {
		if b[i] >= 0xFE {
			out = append(out, int(b[i])-0x100)
		} else {
			out = append(out, int(b[i]))
		}
	}
	return out
}

func TestJitterWaitsForMissing(t *testing.T) {
	j := NewJitter(JitterConfig{Depth: 5, Delay: 80 * time.Millisecond})
	var col collector
	t0 := time.Unix(1000, 0)
	j.Push(pkt(1, 0), t0, col.emit)
	j.Push(pkt(3, 2), t0, col.emit)
	j.Pop(t0.Add(79*time.Millisecond), col.emit)
	if len(col.out) != 160 || j.Len() != 1 {
		t.Fatalf("released %d bytes before the delay, holding %d", len(col.out), j.Len())
	}
	j.Pop(t0.Add(80*time.Millisecond), col.emit)
	if !bytes.Equal(col.out, expect(0, -2, 2)) {
		t.Fatalf("after the delay: frames %v", frames(col.out))
	}
}

func TestJitterTimestampGapAndEvents(t *testing.T) {
	j := NewJitter(JitterConfig{})
	var col collector
	now := time.Unix(1000, 0)
	j.Push(pkt(1, 0), now, col.emit)
	// A telephone event takes seq 2 and no audio; audio resumes at seq 3
	// two frames later on the clock.
	j.Push(Packet{Seq: 2, Timestamp: 1160, Payload: []byte{1, 0, 0, 160}, Skip: true}, now, col.emit)
	j.Push(pkt(3, 3), now, col.emit)
	// A jump beyond MaxGap is a new timeline: no fill. The event's time is
	// silence, not a loss.
	j.Push(Packet{Seq: 4, Timestamp: 1000 + 160*4 + 1_000_000, Payload: frame(4)}, now, col.emit)
	j.Pop(now, col.emit)
	if !bytes.Equal(col.out, expect(0, -1, -1, 3, 4)) {
		t.Fatalf("frames %v", frames(col.out))
	}
	if s := j.Stats(); s.Lost != 0 || s.Resync != 1 {
		t.Fatalf("stats %+v", s)
	}
}

func TestJitterResetAfterSSRCChange(t *testing.T) {
	j := NewJitter(JitterConfig{})
	var col collector
	now := time.Unix(1000, 0)
	j.Push(pkt(100, 0), now, col.emit)
	j.Push(pkt(101, 1), now, col.emit)
	j.Flush(col.emit)
	j.Reset()
	// The new source numbers and stamps from elsewhere: no gap, no late.
	j.Push(Packet{Seq: 7, Timestamp: 99, Payload: frame(2)}, now, col.emit)
	j.Push(Packet{Seq: 8, Timestamp: 259, Payload: frame(3)}, now, col.emit)
	j.Pop(now, col.emit)
	if !bytes.Equal(col.out, expect(0, 1, 2, 3)) {
		t.Fatalf("frames %v", frames(col.out))
	}
	if s := j.Stats(); s.Late != 0 || s.Lost != 0 {
		t.Fatalf("stats %+v", s)
	}
}

func TestMixerInterleavesAndPays(t *testing.T) {
	m := newMixer(2, 0xFF)
	m.ch[0].audio([]byte{1, 2, 3})
	m.ch[1].audio([]byte{9})
	if got, _ := m.take(); !bytes.Equal(got, []byte{1, 9}) {
		t.Fatalf("take %v", got)
	}
	// Channel 1 went quiet: it is padded to channel 0, and its later
	// timestamp gap fill is paid from that debt, not added again.
	m.padTo(1, m.most())
	if got, _ := m.take(); !bytes.Equal(got, []byte{2, 0xFF, 3, 0xFF}) {
		t.Fatalf("take after pad %v", got)
	}
	m.ch[1].fill(2, math.MaxInt64, false)
	m.ch[1].audio([]byte{7})
	m.ch[0].audio([]byte{4})
	if got, _ := m.take(); !bytes.Equal(got, []byte{4, 7}) {
		t.Fatalf("take after debt %v", got)
	}
}

// FuzzJitter pushes arbitrary packets: no panic, output bounded by what
// the timestamps and MaxGap allow, and nothing held after Flush.
func FuzzJitter(f *testing.F) {
	f.Add([]byte{0, 1, 0, 0, 0, 0, 0, 2, 0, 0, 0, 160})
	f.Add([]byte{255, 255, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 255, 255, 255, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		j := NewJitter(JitterConfig{MaxGap: 1600})
		var out int
		emit := func(audio []byte, silence int, _ bool) {
			if silence > 1600 {
				t.Fatalf("silence %d > max gap", silence)
			}
			out += len(audio) + silence
		}
		now := time.Unix(0, 0)
		pushed := 0
		for len(b) >= 6 {
			seq := binary.BigEndian.Uint16(b)
			ts := binary.BigEndian.Uint32(b[2:])
			n := int(b[5]) % 200
			j.Push(Packet{Seq: seq, Timestamp: ts, Payload: make([]byte, n), Skip: b[4]&1 == 1}, now, emit)
			pushed++
			now = now.Add(time.Duration(b[4]) * time.Millisecond)
			j.Pop(now, emit)
			b = b[6:]
		}
		j.Flush(emit)
		if j.Len() != 0 {
			t.Fatalf("%d held after flush", j.Len())
		}
		if out > pushed*(200+1600) {
			t.Fatalf("%d bytes out of %d packets", out, pushed)
		}
	})
}
