package live

import (
	"errors"
	"fmt"
	"testing"

	"github.com/earshot-dev/earshot/store"
)

// TestAttachAudited: each client that attaches to a session is in the
// audit trail, under the key that created the session and from the
// address it came from: a WebSocket client (live.stream: it gets the
// transcripts) and a WHIP peer (live.whip: it sends the audio), a
// reconnection again. A token that attaches nothing records nothing (a
// forged one carries no identity worth keeping, and would let anyone fill
// the trail). Before 2026-11-30 no attachment was recorded.
func TestAttachAudited(t *testing.T) {
	s, db, sig := testService(t, nil)
	_, key, err := db.CreateKey("acme", store.KeyGrant{})
	if err != nil {
		t.Fatal(err)
	}
	created, err := s.CreateLive(t.Context(), "acme", key.ID, "r", []byte(`{}`), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AttachLive(t.Context(), "not.a.token", "192.0.2.9:1", &listener{}); !errors.Is(err, ErrTokenInvalid) {
		t.Fatalf("forged token: %v", err)
	}
	if _, err := s.AttachLive(t.Context(), created.Token, "192.0.2.1:4000", &listener{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AttachAudio(t.Context(), created.Token, "192.0.2.2:5000"); err != nil {
		t.Fatal(err)
	}
	sess, err := s.AttachLive(t.Context(), created.Token, "192.0.2.1:4001", &listener{})
	if err != nil {
		t.Fatal(err)
	}
	sess.Stop(t.Context())
	waitDone(t, sess)
	sig.mu.Lock()
	defer sig.mu.Unlock()
	var got []string
	for _, e := range sig.audits {
		got = append(got, fmt.Sprintf("%s %s %s %s %s %d", e.Action, e.Source, e.KeyID, e.Account, e.Object, e.Status))
	}
	tail := fmt.Sprintf("%s acme %s 0", key.ID, created.ID)
	want := []string{"live.stream 192.0.2.1:4000 " + tail, "live.whip 192.0.2.2:5000 " + tail, "live.stream 192.0.2.1:4001 " + tail}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("audit entries\n%q\nwant\n%q", got, want)
	}
}
