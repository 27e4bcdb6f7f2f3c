package live

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/ingest"
)

// dtmfMessages is the dtmf messages a session kept, decoded.
func dtmfMessages(t *testing.T, s *session) []dtmfData {
	t.Helper()
	var out []dtmfData
	for _, b := range s.messages.messages() {
		var m struct {
			Type string   `json:"type"`
			Data dtmfData `json:"data"`
		}
		if err := json.Unmarshal([]byte(b), &m); err != nil {
			t.Fatal(err)
		}
		if m.Type == typeDTMF {
			out = append(out, m.Data)
		}
	}
	return out
}

// keyAll hands the session one key per digit of digits, 100 ms of audio
// apart.
func keyAll(s *session, digits, source string) {
	for i := 0; i < len(digits); i++ {
		s.received += 3200
		s.key(ingest.Key{Digit: digits[i], Duration: 0.08, Source: source}, -1)
	}
}

// TestKeyMasked: a session's keys go out as dtmf messages in order, at
// their audio position, with no digit anywhere in them (pci.mask_dtmf's
// default).
func TestKeyMasked(t *testing.T) {
	s := pauseSession(pcm16)
	s.p.MessagesConfig.ReceiveDTMFEvents = true
	keyAll(s, "4111111111111111", ingest.KeyRFC4733)
	got := dtmfMessages(t, s)
	if len(got) != 16 {
		t.Fatalf("%d dtmf messages, want 16", len(got))
	}
	for i, d := range got {
		if d.Digit != nil || !d.Masked || d.Index != i+1 || d.Source != ingest.KeyRFC4733 || d.Duration != 0.08 || d.Time != float64(i+1)/10 {
			t.Errorf("message %d: %+v", i, d)
		}
	}
	for _, b := range s.messages.messages() {
		if strings.Contains(b, `"digit":"`) || !strings.Contains(b, `"digit":null`) {
			t.Errorf("a digit in clear: %s", b)
		}
	}
	if n := s.keysNote(); n["keys"] != 16 || n["omitted"] != 0 {
		t.Errorf("post_session_metadata.dtmf %v", n)
	}
}

// TestKeyInClear: pci.mask_dtmf false sends the digit, except while the
// session is paused; the switch off sends nothing.
func TestKeyInClear(t *testing.T) {
	s := pauseSession(pcm16)
	s.p.MessagesConfig.ReceiveDTMFEvents = true
	s.p.PCI.DTMFInClear = true
	keyAll(s, "5", ingest.KeySIPInfo)
	s.setPaused(true, false)
	keyAll(s, "6", ingest.KeySIPInfo)
	got := dtmfMessages(t, s)
	if len(got) != 2 || got[0].Digit == nil || *got[0].Digit != "5" || got[0].Masked || got[1].Digit != nil || !got[1].Masked {
		t.Fatalf("messages %+v", got)
	}
	s = pauseSession(pcm16)
	keyAll(s, "5", ingest.KeySIPInfo)
	if got := dtmfMessages(t, s); len(got) != 0 || s.keys.count != 1 {
		t.Errorf("receive_dtmf_events false: %d messages, %d keys", len(got), s.keys.count)
	}
}

// TestKeyFlood: keys past maxKeyMessages are counted, not sent, and the
// sequences still see them; a key Check refuses is dropped.
func TestKeyFlood(t *testing.T) {
	s := pauseSession(pcm16)
	s.p.MessagesConfig.ReceiveDTMFEvents = true
	s.p.PCI.PauseSequence = "*9"
	for range 5 * maxKeyMessages {
		s.key(ingest.Key{Digit: '1', Source: ingest.KeyRFC4733}, -1)
	}
	s.key(ingest.Key{Digit: 'x', Source: ingest.KeyRFC4733}, -1)
	s.key(ingest.Key{Digit: '1', Source: "fax"}, -1)
	keyAll(s, "*9", ingest.KeyInband)
	if got := dtmfMessages(t, s); len(got) != maxKeyMessages {
		t.Errorf("%d dtmf messages kept, bound %d", len(got), maxKeyMessages)
	}
	if n := s.keysNote(); n["keys"] != 5*maxKeyMessages+2 || n["omitted"] != 4*maxKeyMessages+2 {
		t.Errorf("post_session_metadata.dtmf %v", n)
	}
	if !s.paused {
		t.Error("the pause sequence after the flood did not pause")
	}
}

// TestKeySequence: the pause and resume sequences pause and resume the
// session wherever they appear in its keys, once each: a pause sequence
// while paused changes nothing, and digits in between do not match.
func TestKeySequence(t *testing.T) {
	s := pauseSession(pcm16)
	s.p.PCI.PauseSequence, s.p.PCI.ResumeSequence = "*1", "*2"
	for _, step := range []struct {
		keys   string
		paused bool
	}{
		{"5*", false}, {"1", true}, {"*1", true}, {"4111*", true}, {"3*3", true}, {"*2", false}, {"*2", false},
		{"**1", true}, {"*", true}, {"2", false},
	} {
		keyAll(s, step.keys, ingest.KeyRFC4733)
		if s.paused != step.paused {
			t.Fatalf("after %q: paused %v, want %v", step.keys, s.paused, step.paused)
		}
	}
	spans := s.pausedSpans(s.now())
	if len(spans) != 2 {
		t.Errorf("paused_intervals %v, want 2 spans", spans)
	}
}

// TestKeyPauseStorm: a caller keying the pause and resume sequences over
// and over (a storm far past maxPausedSpans, with and without audio between
// them) leaves the spans bounded and the session paused or not as the last
// sequence says, every key counted and at most maxKeyMessages sent.
func TestKeyPauseStorm(t *testing.T) {
	s := pauseSession(pcm16)
	s.p.MessagesConfig.ReceiveDTMFEvents = true
	s.p.PCI.PauseSequence, s.p.PCI.ResumeSequence = "*1", "*2"
	for i := range 3 * maxPausedSpans {
		if i%3 == 0 {
			s.received += 320 // 10 ms of audio
		}
		s.key(ingest.Key{Digit: '*', Source: ingest.KeyRFC4733}, -1)
		s.key(ingest.Key{Digit: "12"[i%2], Source: ingest.KeyRFC4733}, -1)
		if s.paused != (i%2 == 0) {
			t.Fatalf("sequence %d: paused %v", i, s.paused)
		}
	}
	if n := len(s.spans); n > maxPausedSpans {
		t.Errorf("%d spans kept, bound %d", n, maxPausedSpans)
	}
	if got := dtmfMessages(t, s); len(got) != maxKeyMessages || s.keys.count != 6*maxPausedSpans {
		t.Errorf("%d dtmf messages, %d keys", len(got), s.keys.count)
	}
}
