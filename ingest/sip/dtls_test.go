package sip

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/pion/sdp/v3"
)

// baresipDTLSOffer is baresip 1.0's offer with mediaenc=dtls_srtp and
// rtcp_mux yes (captured): fingerprint and setup at session level.
const baresipDTLSOffer = "v=0\r\no=- 2340958968 1215115333 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n" +
	"a=tool:baresip 1.0.0\r\na=setup:actpass\r\n" +
	"a=fingerprint:SHA-256 0E:B5:4E:F0:0F:48:DF:0F:57:1B:0A:0A:8E:8F:60:8F:32:4A:21:CA:13:EB:87:ED:F8:AD:B6:C1:ED:FA:0D:37\r\n" +
	"m=audio 19272 UDP/TLS/RTP/SAVPF 0 101\r\na=rtpmap:0 PCMU/8000\r\na=rtpmap:101 telephone-event/8000\r\na=fmtp:101 0-15\r\n" +
	"a=sendrecv\r\na=rtcp-rsize\r\na=rtcp-mux\r\na=ptime:20\r\n"

// TestDTLSOffer: a DTLS-SRTP offer is taken as SRTP on a route that
// allows it and answered passive with the door's fingerprint and
// rtcp-mux; offers it cannot take are refused 488, naming why.
func TestDTLSOffer(t *testing.T) {
	id, err := newDTLSIdentity()
	if err != nil {
		t.Fatal(err)
	}
	tls := func(mode string) mediaPolicy { return mediaPolicy{mode: mode, keys: true, transport: "TLS"} }
	noMux := strings.Replace(baresipDTLSOffer, "a=rtcp-mux\r\n", "", 1)
	noFP := strings.Replace(baresipDTLSOffer, "a=fingerprint:SHA-256 0E", "a=x-fingerprint:SHA-256 0E", 1)
	badFP := strings.Replace(baresipDTLSOffer, "SHA-256 0E:B5", "SHA-256 0E-B5", 1)
	badSetup := strings.Replace(baresipDTLSOffer, "a=setup:actpass", "a=setup:holdconn", 1)
	passive := strings.Replace(baresipDTLSOffer, "a=setup:actpass", "a=setup:passive", 1)
	for _, c := range []struct {
		name, offer string
		policy      mediaPolicy
		refuse      string
		setup       string
	}{
		{"actpass over tls", baresipDTLSOffer, tls(srtpMandatory), "", "passive"},
		{"passive offerer", passive, tls(srtpOptional), "", "active"},
		{"over udp in a lab", baresipDTLSOffer, mediaPolicy{mode: srtpMandatory, keys: true, transport: "UDP"}, "", "passive"},
		{"over udp", baresipDTLSOffer, mediaPolicy{mode: srtpOptional, transport: "UDP"}, "not TLS", ""},
		{"srtp off", baresipDTLSOffer, tls(srtpOff), "srtp: off", ""},
		{"no rtcp-mux", noMux, tls(srtpOptional), "rtcp-mux", ""},
		{"no fingerprint", noFP, tls(srtpOptional), "without a=fingerprint", ""},
		{"malformed fingerprint", badFP, tls(srtpOptional), "hex pairs", ""},
		{"unknown setup", badSetup, tls(srtpOptional), "a=setup", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := securedOffer(t, c.offer, c.policy, c.refuse)
			if o == nil {
				return
			}
			ans, err := o.answer(netip.MustParseAddr("192.0.2.9"), []int{20000}, nil, id, 1, 1)
			if err != nil {
				t.Fatal(err)
			}
			var sd sdp.SessionDescription
			if err := sd.Unmarshal(ans); err != nil {
				t.Fatal(err)
			}
			m := sd.MediaDescriptions[0]
			if got := strings.Join(m.MediaName.Protos, "/"); got != "UDP/TLS/RTP/SAVPF" {
				t.Errorf("answer proto %s", got)
			}
			if v, _ := m.Attribute("setup"); v != c.setup {
				t.Errorf("a=setup:%s, want %s", v, c.setup)
			}
			if v, _ := m.Attribute("fingerprint"); v != "sha-256 "+id.fingerprint.Digest {
				t.Errorf("a=fingerprint:%s, want the door's", v)
			}
			if _, ok := m.Attribute("rtcp-mux"); !ok {
				t.Error("no a=rtcp-mux")
			}
			if _, ok := m.Attribute("crypto"); ok {
				t.Error("a DTLS-SRTP answer carries a=crypto")
			}
		})
	}
}

// TestDTLSReofferKeepsAssociation: a re-offer with the call's fingerprint
// is taken; one with another fingerprint, or turning DTLS-SRTP into plain
// RTP, is refused.
func TestDTLSReofferKeepsAssociation(t *testing.T) {
	first, err := parseOffer([]byte(baresipDTLSOffer), nil)
	if err != nil {
		t.Fatal(err)
	}
	same, _ := parseOffer([]byte(baresipDTLSOffer), nil)
	if _, err := same.rekeyed(first); err != nil {
		t.Errorf("the same fingerprint: %v", err)
	}
	other, _ := parseOffer([]byte(strings.Replace(baresipDTLSOffer, "0E:B5", "0F:B5", 1)), nil)
	if _, err := other.rekeyed(first); !errors.Is(err, ErrMediaSecurity) {
		t.Errorf("another fingerprint: %v, want ErrMediaSecurity", err)
	}
	plain, _ := parseOffer([]byte(strings.Replace(baresipDTLSOffer, "UDP/TLS/RTP/SAVPF", "RTP/AVP", 1)), nil)
	if _, err := plain.rekeyed(first); !errors.Is(err, ErrMediaSecurity) {
		t.Errorf("turning DTLS-SRTP off: %v, want ErrMediaSecurity", err)
	}
}
