package live

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"testing"

	"github.com/earshot-dev/earshot/ingest"
	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/store"
)

// pauseSession is a session with no recogniser and no door: enough for
// its pause bookkeeping, which runs on the session's goroutine (here the
// test's).
func pauseSession(f media.Format) *session {
	return &session{
		id: "s", log: slog.New(slog.DiscardHandler), p: &params.Live{}, format: f,
		state: stateAttached, messages: newMessageLog(1 << 20), audit: func(store.AuditEntry) {},
	}
}

var pauseSeed = flag.Uint64("pause-seed", 0, "TestPauseSpans's seed (0: a random one)")

var pcm16 = media.Format{Encoding: media.LinearPCM, BitDepth: 16, SampleRate: 16000, Channels: 1}

// TestPauseSpans toggles a session's pause with a random amount of audio
// (0 to 30 ms) between the requests, and random repeats, far past
// maxPausedSpans: the spans listed stay bounded, sorted and apart, every
// moment paused is inside a listed span (never less is listed than was
// silenced), repeats change nothing, and a pause and a resume with no
// audio between them list nothing.
func TestPauseSpans(t *testing.T) {
	seed := *pauseSeed
	if seed == 0 {
		seed = rand.Uint64()
	}
	t.Logf("seed %d (-pause-seed)", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	s := pauseSession(pcm16)
	var truth []ingest.PausedSpan // what was really paused, each request's state kept
	paused := false
	for i := range 5 * maxPausedSpans {
		s.received += int64(rng.IntN(4)) * 160 // 0, 5, 10 or 15 ms of 16-bit 16 kHz
		want := i%2 == 0
		if rng.IntN(5) == 0 {
			want = paused // a repeat
		}
		before := s.pauseState()
		st := s.setPaused(want, false)
		if want == paused && (st.Paused != before.Paused || st.Since != before.Since) {
			t.Fatalf("request %d repeats the state %v and changed it: %+v, was %+v", i, want, st, before)
		}
		if st.Paused != want {
			t.Fatalf("request %d: paused %v, want %v", i, st.Paused, want)
		}
		now := s.now()
		switch {
		case want && !paused:
			truth = append(truth, ingest.PausedSpan{Start: now, End: -1})
		case !want && paused:
			truth[len(truth)-1].End = now
		}
		paused = want
	}
	end := s.now() + 1
	s.received += 16000 * 2
	spans := s.pausedSpans(s.now())
	if len(spans) > maxPausedSpans || len(spans) < maxPausedSpans/2 {
		t.Fatalf("%d spans listed, bound %d (the test toggles far past it)", len(spans), maxPausedSpans)
	}
	for i, sp := range spans {
		if sp.End < sp.Start || i > 0 && sp.Start < spans[i-1].End {
			t.Fatalf("span %d %v out of order (previous %v)", i, sp, spans[max(i-1, 0)])
		}
	}
	for _, tr := range truth {
		if tr.End < 0 {
			tr.End = end
		}
		for _, at := range []float64{tr.Start, (tr.Start + tr.End) / 2} {
			if tr.End == tr.Start {
				break
			}
			if !inSpans(spans, at) {
				t.Fatalf("paused at %.3f s (span %v) but no listed span covers it", at, tr)
			}
		}
	}
}

func inSpans(spans []ingest.PausedSpan, t float64) bool {
	for _, sp := range spans {
		if t >= sp.Start && t < sp.End {
			return true
		}
	}
	return false
}

// TestPauseNothing: a pause and a resume with no audio between them list
// no span; an open pause is listed while it lasts.
func TestPauseNothing(t *testing.T) {
	s := pauseSession(pcm16)
	s.received = 32000
	s.setPaused(true, false)
	if st := s.pauseState(); !st.Paused || st.Since != 1 || len(st.Spans) != 1 || st.Spans[0] != (ingest.PausedSpan{Start: 1, End: 1}) {
		t.Fatalf("open pause: %+v", st)
	}
	s.setPaused(false, false)
	if st := s.pauseState(); st.Paused || st.Since != 1 || st.Spans != nil {
		t.Fatalf("after an empty pause: %+v", st)
	}
	s.setPaused(true, false)
	s.received += 16000
	s.setPaused(false, false)
	if st := s.pauseState(); len(st.Spans) != 1 || st.Spans[0] != (ingest.PausedSpan{Start: 1, End: 1.5}) || st.Since != 1.5 {
		t.Fatalf("after a pause of 0.5 s: %+v", st)
	}
}

// TestSilenceFill: paused audio is stored as each encoding's silence, and
// the recogniser's samples are zeroed.
func TestSilenceFill(t *testing.T) {
	for _, c := range []struct {
		name string
		f    media.Format
		fill byte
	}{
		{"pcm16", pcm16, 0},
		{"pcm8", media.Format{Encoding: media.LinearPCM, BitDepth: 8, SampleRate: 8000, Channels: 1}, 0x80},
		{"ulaw", media.Format{Encoding: media.MuLaw, BitDepth: 8, SampleRate: 8000, Channels: 1}, 0xff},
		{"alaw", media.Format{Encoding: media.ALaw, BitDepth: 8, SampleRate: 8000, Channels: 1}, 0xd5},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := pauseSession(c.f)
			whole := []byte{1, 2, 3, 4, 5, 6}
			pcm := [][]int16{{7, -8, 9}}
			q := s.silence(whole, pcm)
			if len(q) != len(whole) {
				t.Fatalf("%d bytes of silence for %d", len(q), len(whole))
			}
			for i, b := range q {
				if b != c.fill {
					t.Fatalf("byte %d is %#x, want %#x", i, b, c.fill)
				}
			}
			if whole[0] != 1 {
				t.Fatal("the door's buffer was written")
			}
			for _, v := range pcm[0] {
				if v != 0 {
					t.Fatalf("samples %v not zeroed", pcm[0])
				}
			}
		})
	}
}

// TestUnpaused drops the words of a final that start inside a paused span
// and rebuilds its text and times.
func TestUnpaused(t *testing.T) {
	s := pauseSession(pcm16)
	s.spans = []ingest.PausedSpan{{Start: 1, End: 2}, {Start: 3, End: -1}}
	w := func(word string, start float64) recognizer.Word {
		return recognizer.Word{Word: word, Start: start, End: start + 0.2}
	}
	u := recognizer.Utterance{Start: 0.5, End: 3.2, Text: "a b c d", Words: []recognizer.Word{w("a", 0.5), w("b", 1.5), w("c", 2.5), w("d", 3)}}
	got, ok := s.unpaused(u)
	if !ok || got.Text != "a c" || got.Start != 0.5 || got.End != 2.7 || len(got.Words) != 2 {
		t.Fatalf("unpaused: %v %+v", ok, got)
	}
	if len(u.Words) != 4 || u.Words[1].Word != "b" {
		t.Fatalf("the event's utterance was changed: %+v", u)
	}
	if _, ok := s.unpaused(recognizer.Utterance{Words: []recognizer.Word{w("x", 1.1), w("y", 3.5)}}); ok {
		t.Fatal("an utterance wholly inside paused spans was kept")
	}
}

// TestPauseAudited: pauses and resumes asked outside the API are in the
// audit trail: a WebSocket client's, under the key that created the
// session, and the caller's keypad's (the pci sequences), under none; the
// API's own are its door's to record (none here). Before (until
// 2026-11-30) the trail had none of them.
func TestPauseAudited(t *testing.T) {
	s, db, sig := testService(t, nil)
	_, key, err := db.CreateKey("acme", store.KeyGrant{})
	if err != nil {
		t.Fatal(err)
	}
	created, err := s.CreateLive(t.Context(), "acme", key.ID, "r",
		[]byte(`{"pci":{"pause_sequence":"*1","resume_sequence":"*2"}}`), "")
	if err != nil {
		t.Fatal(err)
	}
	sess, err := s.AttachLive(t.Context(), created.Token, "127.0.0.1:1", &listener{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	client := sess.(interface {
		Pause(context.Context) error
		Resume(context.Context) error
	})
	if err := errors.Join(client.Pause(ctx), client.Resume(ctx)); err != nil {
		t.Fatal(err)
	}
	for _, d := range []byte("*1*2") {
		if err := sess.(ingest.KeySession).Key(ctx, ingest.Key{Digit: d, Duration: 0.08, Source: ingest.KeyRFC4733}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Pause(ctx, created.ID, true); err != nil {
		t.Fatal(err)
	}
	sess.Stop(ctx)
	waitDone(t, sess)
	sig.mu.Lock()
	defer sig.mu.Unlock()
	var got []string
	for _, e := range sig.audits {
		if e.Object != created.ID || e.Account != "acme" {
			t.Errorf("entry %+v: want session %s of acme", e, created.ID)
		}
		got = append(got, fmt.Sprintf("%s %s %q", e.Action, e.Source, e.KeyID))
	}
	ws := fmt.Sprintf("websocket %q", key.ID)
	want := []string{fmt.Sprintf("live.stream 127.0.0.1:1 %q", key.ID), "live.pause " + ws, "live.resume " + ws, `live.pause dtmf ""`, `live.resume dtmf ""`}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("audit entries\n%v\nwant\n%v", got, want)
	}
}
