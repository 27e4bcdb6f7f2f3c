package main

import "testing"

func TestPhased(t *testing.T) {
	pcm := make([]int16, 1000)
	got := phased([]clip{{name: "a", transcript: "x", pcm: pcm}}, 4)
	want := []int{0, 40, 80, 120}
	if len(got) != len(want) {
		t.Fatalf("%d clips, want %d", len(got), len(want))
	}
	for i, c := range got {
		if len(c.pcm) != len(pcm)-want[i] || c.transcript != "x" {
			t.Errorf("phase %d: %d samples, transcript %q; want %d, x", i, len(c.pcm), c.transcript, len(pcm)-want[i])
		}
	}
	if got := phased([]clip{{pcm: pcm}}, 3); len(got[1].pcm) != len(pcm)-52 {
		t.Errorf("a third of a frame dropped %d samples, want 52 (even)", len(pcm)-len(got[1].pcm))
	}
	if one := phased([]clip{{pcm: pcm}}, 1); len(one) != 1 || len(one[0].pcm) != len(pcm) {
		t.Errorf("one phase changed the clip")
	}
}
