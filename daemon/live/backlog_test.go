package live

import (
	"testing"
	"time"

	"github.com/earshot-dev/earshot/recognizer"
)

// secondOf is one second of one channel's samples.
func secondOf() [][]int16 { return [][]int16{make([]int16, recognizer.SampleRate)} }

// queued runs s.queue on each of pcm on a goroutine of its own and returns
// a channel closed once every call has returned.
func queued(s *session, pcm ...[][]int16) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, p := range pcm {
			s.queue(p)
		}
	}()
	return done
}

// TestCallNotHeldByRecogniser: a session whose client is an audio-only
// door (a SIP call: no Listener) goes on taking audio while its recogniser
// takes none (a decoder loading on demand, a box short of CPU), up to
// callBacklog; only past it does it wait, and the recogniser then gets
// the whole backlog at once. A client that reads messages (the WebSocket)
// is held to the recogniser's pace past embeddedBacklog. Before, a call
// was held at embeddedBacklog too: its audio and DTMF keys waited behind
// the recogniser in the door's queue (e2e TestSIPDTMFRFC4733 on a loaded
// box: a key counted 10 s late).
func TestCallNotHeldByRecogniser(t *testing.T) {
	s := pauseSession(pcm16)
	s.recog = &recogniser{in: make(chan [][]int16), events: make(chan recEvent)} // takes nothing until the test does
	var call [][][]int16
	for range callBacklog / recognizer.SampleRate {
		call = append(call, secondOf())
	}
	select {
	case <-queued(s, call...):
	case <-time.After(10 * time.Second): // no unbounded wait: queue returns at once or never
		t.Fatal("a call's session waited for its recogniser short of callBacklog")
	}
	if got := len(s.backlog[0]); got != callBacklog {
		t.Fatalf("backlog %d samples, want %d", got, callBacklog)
	}
	// One more second goes past the bound: the session waits for the
	// recogniser, which takes all of it.
	done := queued(s, secondOf())
	handedOver(t, s, callBacklog+recognizer.SampleRate, "past callBacklog the session did not hand its backlog over")
	<-done

	// A WebSocket client is held past embeddedBacklog.
	s.listener = &listener{}
	done = queued(s, secondOf(), secondOf())
	handedOver(t, s, embeddedBacklog+recognizer.SampleRate, "past embeddedBacklog a WebSocket client's session did not wait for the recogniser")
	<-done
}

// handedOver takes what s hands its recogniser, which must be want
// samples, failing t with fail when nothing comes within 10 s.
func handedOver(t *testing.T, s *session, want int, fail string) {
	t.Helper()
	select {
	case b := <-s.recog.in:
		if len(b[0]) != want {
			t.Errorf("the recogniser got %d samples, want %d", len(b[0]), want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal(fail)
	}
}
