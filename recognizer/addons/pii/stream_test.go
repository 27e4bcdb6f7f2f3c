package pii

import (
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/recognizer"
)

// at returns utt(text) on channel ch starting at start seconds.
func at(text string, ch int, start float64) recognizer.Utterance {
	u := utt(text)
	for i := range u.Words {
		u.Words[i].Start += start
		u.Words[i].End += start
	}
	u.Start, u.End, u.Channel = start, start+float64(len(u.Words)), ch
	return u
}

func texts(fs []Final) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Utterance.Text)
	}
	return out
}

// feed gives s the final u (IDs are checked in
// TestStreamHoldsANumberCutIntoFinals only).
func feed(s *Stream, u recognizer.Utterance) []Final {
	return s.Final(Final{Utterance: u})
}

func TestStreamHoldsANumberCutIntoFinals(t *testing.T) {
	s := NewStream([]string{"PCI", "GDPR"}, Marker)
	finals := []recognizer.Utterance{
		at("my card is four one one one", 0, 0), at("one one one one", 0, 7.3),
		at("one one one one", 0, 11.6), at("one one one one thanks", 0, 15.9),
	}
	for i, u := range finals[:3] {
		if out := s.Final(Final{ID: i, Utterance: u}); len(out) != 0 {
			t.Fatalf("final %d released %q while the number goes on", i, texts(out))
		}
		p := s.Partial(at(u.Text+" one", 0, u.Start))
		if strings.Contains(p.Text, "one") || strings.Contains(p.Text, "four") {
			t.Errorf("partial %q shows digits", p.Text)
		}
	}
	if s.Held() != 3 {
		t.Fatalf("%d held", s.Held())
	}
	out := s.Final(Final{ID: 3, Utterance: finals[3]})
	want := []string{"my card is [CREDIT_CARD]", "[CREDIT_CARD]", "[CREDIT_CARD]", "[CREDIT_CARD] thanks"}
	if got := texts(out); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("released %q, want %q", got, want)
	}
	for i, f := range out {
		if f.ID != i {
			t.Errorf("released final %d has ID %d", i, f.ID)
		}
	}
	if s.Held() != 0 || len(s.Found()) != 4 {
		t.Errorf("%d held, %d found after release", s.Held(), len(s.Found()))
	}
}

func TestStreamReleases(t *testing.T) {
	t.Run("a final without digits goes out at once", func(t *testing.T) {
		s := NewStream(nil, Marker)
		out := feed(s, at("my name is john smith", 0, 0))
		if got := texts(out); len(got) != 1 || got[0] != "my name is [NAME]" {
			t.Errorf("got %q", got)
		}
	})
	t.Run("due after the pause", func(t *testing.T) {
		s := NewStream([]string{"GDPR"}, Marker)
		if out := feed(s, at("call me on four one five", 0, 0)); len(out) != 0 {
			t.Fatalf("released %q", texts(out))
		}
		if out := s.Due(6 + 3.9); len(out) != 0 {
			t.Fatalf("released %q before the pause is over", texts(out))
		}
		if got := texts(s.Due(6 + 4.1)); len(got) != 1 || got[0] != "call me on four one five" {
			t.Errorf("due released %q", got)
		}
	})
	t.Run("a late final does not join", func(t *testing.T) {
		s := NewStream([]string{"GDPR"}, Marker)
		feed(s, at("call me on four one five", 0, 0))
		out := feed(s, at("five five five two six seven one please", 0, 20))
		want := []string{"call me on four one five", "[PHONE_NUMBER] please"}
		if got := texts(out); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("got %q, want %q", got, want)
		}
	})
	t.Run("other channels are not held", func(t *testing.T) {
		s := NewStream([]string{"GDPR"}, Marker)
		feed(s, at("call me on four one five", 0, 0))
		if got := texts(feed(s, at("okay go on", 1, 6.5))); len(got) != 1 || got[0] != "okay go on" {
			t.Errorf("channel 1 got %q", got)
		}
		want := []string{"call me on [PHONE_NUMBER]", "[PHONE_NUMBER] please"}
		if got := texts(feed(s, at("five five five two six seven one please", 0, 7))); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("channel 0 got %q, want %q", got, want)
		}
	})
	t.Run("flush", func(t *testing.T) {
		s := NewStream([]string{"PCI"}, Mask)
		feed(s, at("card four one one one one one one one", 0, 0))
		feed(s, at("one one one one one one one one", 0, 9.5))
		got := texts(s.Flush())
		want := []string{"card **** *** *** *** *** *** *** ***", "*** *** *** *** *** *** *** ***"}
		if strings.Join(got, "|") != strings.Join(want, "|") || s.Held() != 0 {
			t.Errorf("flush %q, want %q", got, want)
		}
	})
	t.Run("bounded", func(t *testing.T) {
		s := NewStream([]string{"PCI"}, Marker)
		n := 0
		for i := range 100 {
			n += len(feed(s, at("one", 0, float64(i)*1.5)))
			if s.Held() >= maxHeld {
				t.Fatalf("%d held", s.Held())
			}
		}
		if n+s.Held() != 100 {
			t.Errorf("%d released, %d held of 100", n, s.Held())
		}
	})
}
