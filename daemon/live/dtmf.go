package live

import (
	"context"
	"math"
	"time"

	"github.com/earshot-dev/earshot/ingest"
	"github.com/earshot-dev/earshot/transcript"
)

// DTMF keys (PROTOCOL.md, DTMF). Every key of a call, whatever its source
// (the doors' RFC 4733 events and SIP INFO requests, the in-band detector
// on the session's own audio), comes to the session's goroutine and goes
// out through key: a dtmf message, the count in post_session_metadata, and
// the route's pause and resume sequences (pci.pause_sequence). Its digit is
// a card digit as often as not: it is never logged, and it goes into the
// message only when pci.mask_dtmf is false and the session is not paused.
// The session keeps, in memory only, the last few digits a sequence needs.

// maxKeyMessages bounds the dtmf messages a session sends (and so keeps in
// result.messages and queues for the callback): later keys are counted in
// post_session_metadata.dtmf.omitted, and still match the sequences, so a
// flood cannot grow the record without bound.
const maxKeyMessages = 1000

// typeDTMF is the message of one key.
const typeDTMF = "dtmf"

// dtmfData is a dtmf message's data. Digit is null when masked (Masked
// true); Index counts the session's keys from 1, so a client sees a gap
// where keys were left out.
type dtmfData struct {
	Digit    *string `json:"digit"`
	Duration float64 `json:"duration"`
	Index    int     `json:"index"`
	Masked   bool    `json:"masked"`
	Source   string  `json:"source"`
	Time     float64 `json:"time"`
}

// keyState is what a session keeps of its keys.
type keyState struct {
	count   int    // keys taken
	omitted int    // keys past maxKeyMessages: counted, no message
	typed   []byte // the last keys, for the sequences; never more than their longest
}

// keyReq is a door's key (attachment.Key).
type keyReq struct {
	gen   int
	k     ingest.Key
	reply chan error
}

func (r keyReq) handle(s *session) {
	if err := s.current(r.gen); err != nil {
		r.reply <- err
		return
	}
	s.lastSeen = time.Now()
	s.key(r.k, -1)
	r.reply <- nil
}

// Key hands the session a key of the door's call (ingest.KeySession): it
// is recorded at the session's current audio position.
func (a *attachment) Key(ctx context.Context, k ingest.Key) error {
	if err := k.Check(); err != nil {
		return err
	}
	reply := make(chan error, 1)
	if err := a.s.call(ctx, keyReq{gen: a.gen, k: k, reply: reply}); err != nil {
		return err
	}
	err, werr := await(ctx, a.s, reply)
	if werr != nil {
		return werr
	}
	return err
}

var _ ingest.KeySession = (*attachment)(nil)

// key records key k at at seconds of the session's audio (at < 0: the
// current position, s.now()) and sends its dtmf message; it then matches
// the pause and resume sequences. It runs on the session's goroutine only
// (a door's keys come through attachment.Key; the in-band detector, in the
// audio's path, calls it directly) and never blocks. A key that Check
// refuses is dropped (the door checks it first).
func (s *session) key(k ingest.Key, at float64) {
	if k.Check() != nil || s.state == stateEnded || s.stopped {
		return
	}
	if at < 0 {
		at = s.now()
	}
	s.keys.count++
	if s.svc != nil && s.svc.keys != nil {
		s.svc.keys.WithLabelValues(k.Source).Inc()
	}
	if s.keys.count > maxKeyMessages {
		s.keys.omitted++
		if s.keys.omitted == 1 {
			s.log.Warn("too many DTMF keys; later ones are counted, not sent", "max_messages", maxKeyMessages)
		}
	} else {
		d := dtmfData{
			Duration: transcript.Round3(math.Min(k.Duration, ingest.MaxKeyDuration)),
			Index:    s.keys.count,
			Masked:   !s.p.PCI.DTMFInClear || s.paused,
			Source:   k.Source,
			Time:     transcript.Round3(at),
		}
		if !d.Masked {
			digit := string(k.Digit)
			d.Digit = &digit
		}
		s.send(msg(typeDTMF, s.id, d))
	}
	s.matchSequence(k.Digit)
}

// matchSequence pauses or resumes the session when its last keys spell
// pci.pause_sequence (while running) or pci.resume_sequence (while paused),
// as POST /v2/live/{id}/pause and /resume do.
func (s *session) matchSequence(d byte) {
	pause, resume := s.p.PCI.PauseSequence, s.p.PCI.ResumeSequence
	longest := max(len(pause), len(resume))
	if longest == 0 {
		return
	}
	if len(s.keys.typed) == longest {
		copy(s.keys.typed, s.keys.typed[1:])
		s.keys.typed = s.keys.typed[:longest-1]
	}
	s.keys.typed = append(s.keys.typed, d)
	want := pause
	if s.paused {
		want = resume
	}
	if want == "" || !endsWith(s.keys.typed, want) {
		return
	}
	clear(s.keys.typed)
	s.keys.typed = s.keys.typed[:0]
	s.setPaused(!s.paused, false)
	s.auditPause(s.paused, "dtmf", "")
}

// endsWith reports whether b ends with suffix.
func endsWith(b []byte, suffix string) bool {
	return len(b) >= len(suffix) && string(b[len(b)-len(suffix):]) == suffix
}

// keysNote is post_session_metadata.dtmf: the keys taken and those left
// without a message; nil when there were none.
func (s *session) keysNote() map[string]int {
	if s.keys.count == 0 {
		return nil
	}
	return map[string]int{"keys": s.keys.count, "omitted": s.keys.omitted}
}
