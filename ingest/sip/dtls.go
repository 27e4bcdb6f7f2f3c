package sip

import (
	"crypto/tls"
	"fmt"
	"strings"

	"github.com/pion/dtls/v3/pkg/crypto/selfsign"
	"github.com/pion/sdp/v3"

	"github.com/earshot-dev/earshot/ingest/rtp"
)

// DTLS-SRTP (RFC 5763, 5764): an UDP/TLS/RTP/SAVP or UDP/TLS/RTP/SAVPF
// audio line carries no keys, only the offerer's certificate fingerprint
// (a=fingerprint) and its DTLS role (a=setup); the keys are agreed in a
// DTLS handshake on the media port (ingest/rtp/dtls.go). The door answers
// a=setup:passive (the offerer, actpass or active, opens the handshake;
// to a passive offerer the door is active), its own certificate's
// fingerprint, and rtcp-mux, which it requires: the handshake and the media
// share one port. The fingerprint must reach the door intact, so it comes
// over TLS in production, as SDES keys do; the route's srtp modes apply as
// to SDES, and allow_sdes_without_tls lets a lab take it over UDP or TCP.

// dtlsOffer is a DTLS-SRTP audio line's setup.
type dtlsOffer struct {
	fingerprint rtp.Fingerprint
	setup       string // the offer's a=setup: actpass, active or passive
}

// dtlsProto reports whether an m= line's protocol is DTLS-SRTP.
func dtlsProto(proto string) bool {
	return proto == "UDP/TLS/RTP/SAVP" || proto == "UDP/TLS/RTP/SAVPF"
}

// offeredDTLS reads a DTLS-SRTP line's fingerprint and setup (media level
// first, then session level); an error says why the line cannot be taken.
func offeredDTLS(sd *sdp.SessionDescription, m *sdp.MediaDescription) (*dtlsOffer, error) {
	attr := func(key string) (string, bool) {
		if v, ok := m.Attribute(key); ok {
			return v, true
		}
		return sd.Attribute(key)
	}
	fp, ok := attr("fingerprint")
	if !ok {
		return nil, fmt.Errorf("%w: DTLS-SRTP line without a=fingerprint", ErrMediaSecurity)
	}
	f, err := rtp.ParseFingerprint(fp)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMediaSecurity, err)
	}
	setup, ok := attr("setup")
	if !ok {
		setup = "active" // RFC 4145 section 4: absent means active
	}
	switch setup = strings.ToLower(strings.TrimSpace(setup)); setup {
	case "actpass", "active", "passive":
	default:
		return nil, fmt.Errorf("%w: a=setup:%s, want actpass, active or passive", ErrMediaSecurity, shown(setup, "abcdefghijklmnopqrstuvwxyz"))
	}
	if _, mux := m.Attribute("rtcp-mux"); !mux {
		return nil, fmt.Errorf("%w: DTLS-SRTP without a=rtcp-mux is not taken (the handshake and the media share one port)", ErrMediaSecurity)
	}
	return &dtlsOffer{fingerprint: f, setup: setup}, nil
}

// dtlsAnswer is the answer's a=setup and a=fingerprint for a DTLS-SRTP
// line the door takes with its certificate's fingerprint local.
func (d *dtlsOffer) answer(local rtp.Fingerprint) []sdp.Attribute {
	setup := "passive"
	if d.setup == "passive" {
		setup = "active"
	}
	return []sdp.Attribute{sdp.NewAttribute("setup", setup), sdp.NewAttribute("fingerprint", local.Hash+" "+local.Digest)}
}

// stream is the rtp package's DTLS setup for the line.
func (d *dtlsOffer) stream(cert tls.Certificate) *rtp.DTLS {
	return &rtp.DTLS{Certificate: cert, Fingerprint: d.fingerprint, Client: d.setup == "passive"}
}

// dtlsIdentity is the door's DTLS certificate, made at start: a
// self-signed one (RFC 5763: the fingerprint in the signed-over-TLS SDP is
// the proof), and its fingerprint.
type dtlsIdentity struct {
	cert        tls.Certificate
	fingerprint rtp.Fingerprint
}

func newDTLSIdentity() (*dtlsIdentity, error) {
	cert, err := selfsign.GenerateSelfSigned()
	if err != nil {
		return nil, fmt.Errorf("sip: dtls certificate: %w", err)
	}
	fp, err := rtp.CertificateFingerprint(cert)
	if err != nil {
		return nil, fmt.Errorf("sip: dtls certificate: %w", err)
	}
	return &dtlsIdentity{cert: cert, fingerprint: fp}, nil
}
