package live

import (
	"context"
	"errors"
	"testing"

	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/ingest"
	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/store"
)

// attached creates a session for account with key keyID and attaches a
// client to it.
func attached(t *testing.T, s *Service, account, keyID string) (ingest.LiveCreated, ingest.Session) {
	t.Helper()
	c, err := s.CreateLive(t.Context(), account, keyID, "r", []byte(`{}`), "")
	if err != nil {
		t.Fatal(err)
	}
	sess, err := s.AttachLive(t.Context(), c.Token, "127.0.0.1:1", &listener{})
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.Write(t.Context(), speechPCM(t)[:32000]); err != nil {
		t.Fatal(err)
	}
	return c, sess
}

// TestEndKey: revoking an API key ends the sessions it created (and only
// those), each stored with what it heard; the revoked key's token no
// longer attaches.
func TestEndKey(t *testing.T) {
	two := 2
	s, db, _ := testService(t, func(c *Config) { c.MaxChannelsPerAccount = &two })
	_, k1, err := db.CreateKey("acme", store.KeyGrant{})
	if err != nil {
		t.Fatal(err)
	}
	_, k2, err := db.CreateKey("acme", store.KeyGrant{})
	if err != nil {
		t.Fatal(err)
	}
	c1, sess1 := attached(t, s, "acme", k1.ID)
	c2, sess2 := attached(t, s, "acme", k2.ID)
	if err := db.RevokeKey(k1.ID); err != nil {
		t.Fatal(err)
	}
	s.EndKey(k1.ID)
	waitDone(t, sess1)
	select {
	case <-sess2.Done():
		t.Fatal("another key's session ended")
	default:
	}
	if j, _ := db.Job(c1.ID); j.Status != store.StatusDone && j.Status != store.StatusError {
		t.Errorf("revoked key's session left %s", j.Status)
	}
	if err := s.CheckToken(c1.Token); err == nil {
		t.Error("a revoked key's token still checks")
	}
	if j, _ := db.Job(c2.ID); j.Status != store.StatusProcessing {
		t.Errorf("the other session is %s", j.Status)
	}
	s.End(c2.ID) // DELETE of a running session ends it first
	waitDone(t, sess2)
	if n := s.Sessions(); n != 0 {
		t.Errorf("%d sessions left", n)
	}
}

// TestOpenLive: a door without an HTTP request (SIP) opens a session
// already attached, its job processing with the door's metadata beside
// the route's; without options it is a validation error and nothing is
// stored.
func TestOpenLive(t *testing.T) {
	s, db, _ := testService(t, nil)
	format := media.Format{Encoding: media.MuLaw, SampleRate: 8000, BitDepth: 8, Channels: 1}
	if _, err := s.OpenLive(t.Context(), ingest.LiveRequest{Account: "acme", Format: format}); errcode.Status(err) != 400 {
		t.Errorf("no options: %v (%d)", err, errcode.Status(err))
	}
	opts, err := params.DecodeLiveOptions(map[string]any{"custom_metadata": map[string]any{"route": "main"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	sess, err := s.OpenLive(ctx, ingest.LiveRequest{Account: "acme", Format: format, Options: opts,
		Metadata: map[string]any{"caller": "sip:alice@example.com"}, Source: "sip"})
	if err != nil {
		t.Fatal(err)
	}
	j, err := db.Job(sess.ID())
	if err != nil {
		t.Fatal(err)
	}
	if j.Status != store.StatusProcessing || j.CustomMetadata["route"] != "main" || j.CustomMetadata["caller"] != "sip:alice@example.com" ||
		j.PostSessionMetadata["source"] != "sip" {
		t.Errorf("SIP job %s metadata %v psm %v", j.Status, j.CustomMetadata, j.PostSessionMetadata)
	}
	if sess.Format().Encoding != media.MuLaw || sess.Format().SampleRate != 8000 {
		t.Errorf("format %+v", sess.Format())
	}
	ulaw := make([]byte, 8000) // a second of mu-law silence
	for i := range ulaw {
		ulaw[i] = 0xff
	}
	if err := sess.Write(t.Context(), ulaw); err != nil {
		t.Fatal(err)
	}
	if err := sess.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitDone(t, sess)
	if j, _ := db.Job(sess.ID()); j.Status != store.StatusDone {
		t.Errorf("ended call: %s %q", j.Status, j.ErrorMessage)
	}
	if n, _ := db.CountJobs(store.KindLive, ""); n != 1 {
		t.Errorf("%d live jobs", n)
	}
	if _, err := s.AttachLive(t.Context(), "not.a.token", "127.0.0.1:1", nil); !errors.Is(err, ErrTokenInvalid) {
		t.Errorf("bad token: %v", err)
	}
}
