package main

import "testing"

// TestTurnEnd: a final's latency counts from its last audio: on a plain
// call's mixed channel a final holding the end of one turn and the start
// of the next ends in the next, and its own end is the bound when the turn
// goes on (a turn cut into several finals).
func TestTurnEnd(t *testing.T) {
	u := func(seconds float64) *utt { return &utt{pcm16: make([]int16, int(seconds*16000))} }
	c := call{turns: []turn{
		{u: u(3), leg: 0, start: 0.5}, // ends 3.5
		{u: u(2), leg: 1, start: 3.2}, // ends 5.2, overlapping the first
		{u: u(2), leg: 0, start: 6},   // ends 8
	}}
	for _, tc := range []struct {
		name       string
		leg        int
		start, end float64
		want       float64
	}{
		{"within a turn", 0, 1, 3.3, 3.3},
		{"past its turn's end", 0, 1, 3.6, 3.5},
		{"mixed: across two turns", -1, 3.1, 5.0, 5.0},
		{"mixed: past the second", -1, 3.1, 5.4, 5.2},
		{"leg 0 does not take leg 1's turn", 0, 3.1, 5.0, 3.5},
		{"no turn", 0, 5.5, 5.8, 0},
	} {
		if got := c.turnEnd(tc.leg, tc.start, tc.end); got != tc.want {
			t.Errorf("%s: turnEnd(%d, %g, %g) = %g, want %g", tc.name, tc.leg, tc.start, tc.end, got, tc.want)
		}
	}
}
