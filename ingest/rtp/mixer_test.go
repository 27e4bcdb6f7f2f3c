package rtp

import "testing"

// TestFillPaysDebtPastTheLimit: a gap the pads already covered (debt) adds
// no silence, so it is paid back even when the channel's silence is past
// the wall-clock limit; only new silence can pass it. Before, such a gap
// was refused as a jump and the debt dropped, so a channel padded ahead
// while it was quiet (a SIPREC leg that starts late, sent faster than real
// time) lost the credit its next gap needed.
func TestFillPaysDebtPastTheLimit(t *testing.T) {
	c := &mixChan{silence: 0xFF}
	c.pad(800) // quiet while the other leg talked: 800 frames ahead of its clock
	c.fill(400, 100, false)
	if c.debt != 400 || c.unfilled != 0 || len(c.pending) != 800 {
		t.Fatalf("after a 400-frame gap within the debt: debt %d unfilled %d pending %d; want 400, 0, 800", c.debt, c.unfilled, len(c.pending))
	}
	c.fill(1000, 100, false) // 600 frames of new silence past the limit: a jump
	if c.debt != 0 || c.unfilled != 1000 || len(c.pending) != 800 {
		t.Fatalf("after a jump past the limit: debt %d unfilled %d pending %d; want 0, 1000, 800", c.debt, c.unfilled, len(c.pending))
	}
}
