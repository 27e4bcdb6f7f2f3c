package api

import (
	"testing"
	"time"
)

// TestMessageBucket: a client at its rate is never cut however its frames
// bunch within the burst, frames queued while the connection was busy are
// excused up to another burst, and a flood is cut.
func TestMessageBucket(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	t.Run("bunches within the rate", func(t *testing.T) {
		b := newMessageBucket(50, t0)
		for k := range 20 { // 40 frames every 800 ms: 50 a second
			for i := range 40 {
				if !b.take(at(800 * k)) {
					t.Fatalf("bunch %d frame %d cut", k, i)
				}
			}
		}
	})
	t.Run("flood", func(t *testing.T) {
		b := newMessageBucket(50, t0)
		n := 0
		for b.take(at(n)) { // one frame a millisecond: 1000 a second
			n++
		}
		if n < 50 || n > 60 {
			t.Errorf("flood cut after %d frames, want about one burst (50)", n)
		}
	})
	t.Run("queued while busy", func(t *testing.T) {
		b := newMessageBucket(50, t0)
		if !b.take(t0) {
			t.Fatal("first frame cut")
		}
		// The session held the frame 2 s; the client kept sending 50 a
		// second meanwhile, and the 100 frames come in at once.
		b.busy(2 * time.Second)
		for i := range 100 {
			if !b.take(at(2000)) {
				t.Fatalf("queued frame %d cut", i)
			}
			b.busy(0) // each handed on at once
		}
		// Drained: the excuse ends, the burst is one second's again.
		for i := range 60 {
			if !b.take(at(5000)) {
				if i < 50 {
					t.Fatalf("frame %d after the backlog cut", i)
				}
				return
			}
		}
		t.Error("60 frames at once after the backlog were all taken, want the cap back at 50")
	})
}
