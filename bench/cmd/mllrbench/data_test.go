package main

import (
	"slices"
	"testing"
	"time"
)

func TestGroups(t *testing.T) {
	u := func(sp string, s float64) utt { return utt{id: sp, speaker: sp, seconds: s} }
	us := []utt{u("a", 20), u("b", 40), u("a", 15), u("a", 10), u("b", 10), u("a", 31), u("a", 12)}
	var got [][]float64
	var who []string
	for _, g := range groups(us, 30*time.Second) {
		var ss []float64
		for _, x := range g.utts {
			ss = append(ss, x.seconds)
		}
		got = append(got, ss)
		who = append(who, g.speaker)
	}
	// a: 20+15 closes a group, 10+31 the next, 12 (under 15) joins it; b: 40
	// closes one, 10 (under 15) joins it.
	want := [][]float64{{20, 15}, {10, 31, 12}, {40, 10}}
	if !slices.EqualFunc(got, want, slices.Equal) || !slices.Equal(who, []string{"a", "a", "b"}) {
		t.Errorf("groups = %v %v, want %v [a a b]", got, who, want)
	}
}

func TestTestSpeaker(t *testing.T) {
	for id, want := range map[string]string{
		"ls-test-clean-1089-134686-0000":         "ls-1089",
		"ls-dev-clean-2412-153948-0000":          "ls-2412",
		"librivox-sense-and-sensibility-01-0870": "librivox-sense-and-sensibility",
		"ljspeech-LJ001-0007-to-0016-long":       "ljspeech",
		"pocketsphinx-goforward":                 "pocketsphinx-goforward",
	} {
		if got := testSpeaker(id); got != want {
			t.Errorf("testSpeaker(%q) = %q, want %q", id, got, want)
		}
	}
}
