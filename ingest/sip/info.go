package sip

import (
	"bytes"
	"errors"
	"fmt"
	"mime"
	"strconv"
	"strings"
	"time"

	sipmsg "github.com/emiago/sipgo/sip"

	"github.com/earshot-dev/earshot/ingest"
)

// SIP INFO DTMF: a PBX that does not send RFC 4733 events sends each key
// as an in-dialog INFO whose body is application/dtmf-relay
// ("Signal=5\r\nDuration=160\r\n", the duration in milliseconds) or
// application/dtmf (the digit alone). Each becomes a key of the call's
// session, as an RTP event does, under the same bound (the call's
// KeyLimiter). Neither a digit nor a body is ever logged or quoted in an
// error.

// maxInfoBody bounds a DTMF INFO body; a larger one is malformed.
const maxInfoBody = 512

// ErrBadDTMF is returned for a DTMF INFO body that cannot be read (400).
var ErrBadDTMF = errors.New("sip: malformed DTMF body")

// Content types of DTMF INFO bodies.
const (
	typeDTMFRelay = "application/dtmf-relay"
	typeDTMF      = "application/dtmf"
)

// parseDTMFInfo reads a DTMF INFO body of content type contentType:
// ErrUnsupportedMedia for another type (415), ErrBadDTMF for a malformed
// body (400).
func parseDTMFInfo(contentType string, body []byte) (ingest.Key, error) {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return ingest.Key{}, fmt.Errorf("%w: an INFO's content type does not parse", ErrUnsupportedMedia)
	}
	if len(body) > maxInfoBody {
		return ingest.Key{}, fmt.Errorf("%w: %d bytes, at most %d", ErrBadDTMF, len(body), maxInfoBody)
	}
	switch mt {
	case typeDTMFRelay:
		return parseDTMFRelay(body)
	case typeDTMF:
		d, ok := dtmfSignal(string(bytes.TrimSpace(body)))
		if !ok {
			return ingest.Key{}, fmt.Errorf("%w: an application/dtmf body must be one DTMF digit", ErrBadDTMF)
		}
		return ingest.Key{Digit: d, Source: ingest.KeySIPInfo}, nil
	}
	return ingest.Key{}, fmt.Errorf("%w: INFO body %s (takes %s, %s)", ErrUnsupportedMedia, mt, typeDTMFRelay, typeDTMF)
}

// parseDTMFRelay reads an application/dtmf-relay body: lines name=value,
// Signal (required, once) and Duration (milliseconds, optional); other
// names are ignored.
func parseDTMFRelay(body []byte) (ingest.Key, error) {
	k := ingest.Key{Source: ingest.KeySIPInfo}
	signal, duration := false, false
	for line := range strings.SplitSeq(string(body), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		name, value, ok := strings.Cut(line, "=")
		if !ok {
			return k, fmt.Errorf("%w: a dtmf-relay line is not name=value", ErrBadDTMF)
		}
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		switch {
		case strings.EqualFold(name, "Signal"):
			d, ok := dtmfSignal(value)
			if !ok || signal {
				return k, fmt.Errorf("%w: Signal must be one DTMF digit, once", ErrBadDTMF)
			}
			k.Digit, signal = d, true
		case strings.EqualFold(name, "Duration"):
			ms, err := strconv.ParseUint(value, 10, 32)
			if err != nil || duration {
				return k, fmt.Errorf("%w: Duration must be milliseconds, once", ErrBadDTMF)
			}
			k.Duration, duration = min(float64(ms)/1000, ingest.MaxKeyDuration), true
		}
	}
	if !signal {
		return k, fmt.Errorf("%w: a dtmf-relay body needs a Signal", ErrBadDTMF)
	}
	return k, nil
}

// dtmfSignal reads a digit as INFO bodies give it: the character (a-d in
// either case), or the RFC 4733 event code of *, #, A-D (10 to 15).
func dtmfSignal(s string) (byte, bool) {
	if len(s) == 1 {
		d := s[0]
		if d >= 'a' && d <= 'd' {
			d -= 'a' - 'A'
		}
		return d, ingest.IsDigit(d)
	}
	if n, err := strconv.Atoi(s); err == nil && n >= 10 && len(s) == 2 {
		return ingest.EventDigit(n)
	}
	return 0, false
}

// onInfo takes an in-dialog INFO: a DTMF body becomes a key of the call
// (200); an empty one is a keep-alive (200); another content type 415, a
// malformed body 400.
func (s *Server) onInfo(req *sipmsg.Request, tx sipmsg.ServerTransaction) {
	c := s.bodyInDialog(req, tx)
	if c == nil {
		return
	}
	ct := ""
	if h := req.ContentType(); h != nil {
		ct = h.Value()
	}
	k, err := parseDTMFInfo(ct, req.Body())
	if err != nil {
		c.log.Info("sip info refused", "error", err)
		s.respondErr(req, tx, err)
		return
	}
	c.key(k)
	s.respond(req, tx, 200, "OK")
}

// key hands a key of the call to its session, under the call's bound.
func (c *call) key(k ingest.Key) {
	if c.keyLimit.Admit(time.Now(), c.log) {
		ingest.SendKey(c.ctx, c.sess, k, c.log)
	}
}
