package sip

import (
	"errors"

	sipmsg "github.com/emiago/sipgo/sip"

	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/ingest"
)

var (
	// ErrNoCodec is returned when an offer has no audio stream with PCMU,
	// PCMA or G722 over RTP/AVP, or a re-INVITE none the call's session
	// takes (488 Not Acceptable Here).
	ErrNoCodec = errors.New("sip: no acceptable codec")

	// ErrBadOffer is returned when the SDP or SIPREC body cannot be parsed
	// (400 Bad Request).
	ErrBadOffer = errors.New("sip: malformed offer")

	// ErrNoRoute is returned when no route matches the request-URI user
	// and source (404 Not Found).
	ErrNoRoute = errors.New("sip: no route")

	// ErrForbidden is returned for a source outside sip.allow (403).
	ErrForbidden = errors.New("sip: source not allowed")

	// ErrBusy is returned when a route's call limit is reached (486 Busy
	// Here). The door's own limit (sip.max_calls) is the node's capacity:
	// ingest.ErrAtCapacity, 503, so a proxy tries another node.
	ErrBusy = errors.New("sip: call limit reached")

	// ErrMediaSecurity is returned when an offer's SRTP does not fit the
	// route's srtp policy and transport: plain RTP on a mandatory route,
	// RTP/SAVP on one with srtp off, SDES keys over a transport other than
	// TLS, no usable a=crypto, a re-offer turning SRTP on or off (488 Not
	// Acceptable Here; the error names why).
	ErrMediaSecurity = errors.New("sip: media security refused")

	// ErrUnsupportedMedia is returned for an INVITE body that is neither
	// application/sdp nor SIPREC multipart/mixed (415).
	ErrUnsupportedMedia = errors.New("sip: unsupported body")

	// ErrInsecureSIPS is returned for an INVITE to a sips: URI that came
	// over a transport other than TLS (RFC 5630: a SIPS request travels
	// over TLS on every hop): 416 Unsupported URI Scheme.
	ErrInsecureSIPS = errors.New("sip: sips URI over a transport other than TLS")
)

// reply maps an error to the SIP final response the caller gets; it is the
// door's one mapping of the daemon's sentinels.
func reply(err error) (int, string) {
	switch {
	case errors.Is(err, ErrNoCodec), errors.Is(err, ErrMediaSecurity):
		return 488, "Not Acceptable Here"
	case errors.Is(err, ErrBadOffer), errors.Is(err, ErrBadDTMF):
		return 400, "Bad Request"
	case errors.Is(err, ErrNoRoute):
		return 404, "Not Found"
	case errors.Is(err, ErrForbidden):
		return 403, "Forbidden"
	case errors.Is(err, ErrBusy):
		return 486, "Busy Here"
	case errors.Is(err, ErrUnsupportedMedia):
		return 415, "Unsupported Media Type"
	case errors.Is(err, ErrInsecureSIPS):
		return 416, "Unsupported URI Scheme"
	case errors.Is(err, ingest.ErrAtCapacity), errors.Is(err, errcode.ErrLiveQuota):
		// The account's live limits (live.max_sessions_per_account, from
		// OpenLive) too: another node may have room for the call, and a
		// proxy fails a 503 over, never a 500.
		return 503, "Service Unavailable"
	}
	return 500, "Server Internal Error"
}

// retryAfter is the Retry-After (seconds) of a 503: a node at capacity
// usually has a free slot again within seconds. A proxy in front of the
// nodes (Kamailio) does not wait: it tries the next node at once.
const retryAfter = "5"

// replyHeaders are the headers the refusal of err carries besides the
// status: Retry-After on a 503.
func replyHeaders(err error) []sipmsg.Header {
	if code, _ := reply(err); code == 503 {
		return []sipmsg.Header{sipmsg.NewHeader("Retry-After", retryAfter)}
	}
	return nil
}
