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

func texts(us []recognizer.Utterance) []string {
	var out []string
	for _, u := range us {
		out = append(out, u.Text)
	}
	return out
}

func TestStreamHoldsANumberCutIntoFinals(t *testing.T) {
	s := NewStream([]string{"PCI", "GDPR"}, Marker)
	finals := []recognizer.Utterance{
		at("my card is four one one one", 0, 0), at("one one one one", 0, 7.3),
		at("one one one one", 0, 11.6), at("one one one one thanks", 0, 15.9),
	}
	for i, u := range finals[:3] {
		if out := s.Final(u); len(out) != 0 {
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
	out := s.Final(finals[3])
	want := []string{"my card is [CREDIT_CARD]", "[CREDIT_CARD]", "[CREDIT_CARD]", "[CREDIT_CARD] thanks"}
	if got := texts(out); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("released %q, want %q", got, want)
	}
	if s.Held() != 0 || len(s.Found()) != 4 {
		t.Errorf("%d held, %d found after release", s.Held(), len(s.Found()))
	}
}

func TestStreamReleases(t *testing.T) {
	t.Run("a final without digits goes out at once", func(t *testing.T) {
		s := NewStream(nil, Marker)
		out := s.Final(at("my name is john smith", 0, 0))
		if got := texts(out); len(got) != 1 || got[0] != "my name is [NAME]" {
			t.Errorf("got %q", got)
		}
	})
	t.Run("due after the pause", func(t *testing.T) {
		s := NewStream([]string{"GDPR"}, Marker)
		if out := s.Final(at("call me on four one five", 0, 0)); len(out) != 0 {
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
		s.Final(at("call me on four one five", 0, 0))
		out := s.Final(at("five five five two six seven one please", 0, 20))
		want := []string{"call me on four one five", "[PHONE_NUMBER] please"}
		if got := texts(out); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("got %q, want %q", got, want)
		}
	})
	t.Run("other channels are not held", func(t *testing.T) {
		s := NewStream([]string{"GDPR"}, Marker)
		s.Final(at("call me on four one five", 0, 0))
		if got := texts(s.Final(at("okay go on", 1, 6.5))); len(got) != 1 || got[0] != "okay go on" {
			t.Errorf("channel 1 got %q", got)
		}
		want := []string{"call me on [PHONE_NUMBER]", "[PHONE_NUMBER] please"}
		if got := texts(s.Final(at("five five five two six seven one please", 0, 7))); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("channel 0 got %q, want %q", got, want)
		}
	})
	t.Run("flush", func(t *testing.T) {
		s := NewStream([]string{"PCI"}, Mask)
		s.Final(at("card four one one one one one one one", 0, 0))
		s.Final(at("one one one one one one one one", 0, 9.5))
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
			n += len(s.Final(at("one", 0, float64(i)*1.5)))
			if s.Held() >= maxHeld {
				t.Fatalf("%d held", s.Held())
			}
		}
		if n+s.Held() != 100 {
			t.Errorf("%d released, %d held of 100", n, s.Held())
		}
	})
}
