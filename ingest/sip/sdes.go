package sip

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	sipmsg "github.com/emiago/sipgo/sip"
	"github.com/pion/sdp/v3"

	"github.com/earshot-dev/earshot/ingest/rtp"
)

// SDES (RFC 4568): an offer's audio line carries its sender's SRTP keys in
// a=crypto lines; the answer picks one (by its tag) and gives the door's
// own key for what the door sends (its RTCP). RTP/SAVP and RTP/SAVPF lines
// must carry a usable one; an RTP/AVP line that carries one (best-effort
// SRTP, as baresip's mediaenc=srtp offers) is answered encrypted too when
// the route allows. The keys travel in the SDP, so they are taken and
// given only over TLS, unless the route says allow_sdes_without_tls (a
// lab). A route's srtp says off (plain RTP only: an RTP/SAVP offer gets
// 488), optional (the default: SRTP when offered) or mandatory (a plain
// offer gets 488).

// The values of Route.SRTP.
const (
	srtpOff       = "off"
	srtpOptional  = "optional"
	srtpMandatory = "mandatory"
)

const (
	// maxCryptoLine bounds the a=crypto value parsed (RFC 4568 section
	// 9.1; the longest real ones, AES-256 with lifetime, MKI and session
	// parameters, are under 200 bytes).
	maxCryptoLine = 512
	// maxCryptoLines bounds the a=crypto lines of one m= line weighed;
	// more are not read.
	maxCryptoLines = 16
)

// sdesCrypto is one usable a=crypto line: the offerer's key.
type sdesCrypto struct {
	tag    int
	key    rtp.SRTPKey
	window uint // WSH: the replay window the offerer asks for, 0 if none
}

// Format prints the tag and suite only, for every verb: fmt does not call
// the key's own Format inside an unexported field.
func (c sdesCrypto) Format(f fmt.State, _ rune) {
	fmt.Fprintf(f, "a=crypto tag %d %s", c.tag, c.key)
}

// errCrypto is why an a=crypto line is not usable; it never carries key
// bytes.
var errCrypto = errors.New("a=crypto")

// parseCrypto reads one a=crypto value:
//
//	tag SP suite SP inline:key||salt[|lifetime][|mki:length] *(SP session-param)
//
// It takes one key (no ";"-joined second key), an MKI of 1 to 4 bytes,
// the session parameters KDR=0 and WSH, and refuses the others
// (UNENCRYPTED_SRTP, UNENCRYPTED_SRTCP, UNAUTHENTICATED_SRTP, FEC_*:
// encryption is the point; an unknown one must not be ignored, section
// 6.3).
func parseCrypto(v string) (sdesCrypto, error) {
	if len(v) > maxCryptoLine {
		return sdesCrypto{}, fmt.Errorf("%w: %d bytes, at most %d", errCrypto, len(v), maxCryptoLine)
	}
	f := strings.Fields(v)
	if len(f) < 3 {
		return sdesCrypto{}, fmt.Errorf("%w: %d fields, want tag, suite and key", errCrypto, len(f))
	}
	var c sdesCrypto
	tag, err := strconv.Atoi(f[0])
	if err != nil || tag < 0 || len(f[0]) > 9 {
		return c, fmt.Errorf("%w: tag %s is not 1 to 9 digits", errCrypto, shown(f[0], digits))
	}
	c.tag = tag
	c.key.Suite = rtp.SuiteByName(f[1])
	if c.key.Suite == rtp.SuiteNone {
		return c, fmt.Errorf("%w: unknown suite %s", errCrypto, shown(f[1], suiteChars))
	}
	if err := parseKeyParams(f[2], &c.key); err != nil {
		return c, err
	}
	for _, p := range f[3:] {
		name, val, _ := strings.Cut(p, "=")
		switch name {
		case "KDR":
			if val != "0" {
				return c, fmt.Errorf("%w: KDR=%s (key derivation rate) is not supported", errCrypto, shown(val, digits))
			}
		case "WSH":
			n, err := strconv.Atoi(val)
			if err != nil || n < 64 {
				return c, fmt.Errorf("%w: WSH=%s is not a window of at least 64", errCrypto, shown(val, digits))
			}
			c.window = uint(min(n, 1<<16))
		case "UNENCRYPTED_SRTP", "UNENCRYPTED_SRTCP", "UNAUTHENTICATED_SRTP":
			return c, fmt.Errorf("%w: %s is not taken", errCrypto, name)
		default:
			return c, fmt.Errorf("%w: session parameter %s is not supported", errCrypto, shown(name, suiteChars))
		}
	}
	return c, nil
}

// parseKeyParams reads inline:key||salt[|lifetime][|mki:length] into k.
func parseKeyParams(s string, k *rtp.SRTPKey) error {
	if strings.Contains(s, ";") {
		return fmt.Errorf("%w: more than one key", errCrypto)
	}
	method, info, ok := strings.Cut(s, ":")
	if !ok || method != "inline" {
		return fmt.Errorf("%w: key method %s, want inline", errCrypto, shown(method, "abcdefghijklmnopqrstuvwxyz"))
	}
	parts := strings.Split(info, "|")
	if len(parts) > 3 {
		return fmt.Errorf("%w: %d key fields, at most key, lifetime and MKI", errCrypto, len(parts))
	}
	key, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(parts[0], "="))
	if err != nil {
		return fmt.Errorf("%w: the key is not base64", errCrypto) // the error would quote key bytes
	}
	if want := k.Suite.KeyLen(); len(key) != want {
		return fmt.Errorf("%w: %s takes a %d-byte key and salt, not %d", errCrypto, k.Suite, want, len(key))
	}
	k.Key = key
	for i, p := range parts[1:] {
		if v, l, isMKI := strings.Cut(p, ":"); isMKI {
			if i != len(parts)-2 {
				return fmt.Errorf("%w: MKI before the lifetime", errCrypto)
			}
			mki, err := parseMKI(v, l)
			if err != nil {
				return err
			}
			k.MKI = mki
			continue
		}
		if i != 0 || !lifetime(p) {
			return fmt.Errorf("%w: lifetime %s is not a number or 2^n up to 2^48", errCrypto, shown(p, digits+"^"))
		}
	}
	return nil
}

// parseMKI reads an MKI value and its length in bytes (1 to 4).
func parseMKI(v, l string) ([]byte, error) {
	n, err := strconv.Atoi(l)
	if err != nil || n < 1 || n > 4 {
		return nil, fmt.Errorf("%w: MKI length %s, 1 to 4 bytes taken", errCrypto, shown(l, digits))
	}
	val, err := strconv.ParseUint(v, 10, 8*n)
	if err != nil {
		return nil, fmt.Errorf("%w: MKI value %s does not fit %d bytes", errCrypto, shown(v, digits), n)
	}
	mki := make([]byte, n)
	for i := n - 1; i >= 0; i-- {
		mki[i] = byte(val)
		val >>= 8
	}
	return mki, nil
}

// lifetime reports whether s is a key lifetime: decimal or 2^n, at most
// 2^48 packets (RFC 3711 section 9.2). The door does not rekey: a sender
// reaching it ends its stream.
func lifetime(s string) bool {
	if e, ok := strings.CutPrefix(s, "2^"); ok {
		n, err := strconv.Atoi(e)
		return err == nil && n >= 0 && n <= 48
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return err == nil && n > 0 && n <= 1<<48
}

// Character sets of the fields an error may quote.
const (
	digits     = "0123456789"
	suiteChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"
)

// shown quotes an offered field in an error only when it is short and made
// of the characters its kind has (a suite name: upper case, digits and
// underscores); anything else, a key moved into the wrong field among
// them, is shown as its length.
func shown(s, chars string) string {
	if len(s) > 0 && len(s) <= 40 && strings.Trim(s, chars) == "" {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("(%d bytes, not shown)", len(s))
}

// offeredCrypto reads the a=crypto lines of m: the first usable one in
// offer order (the offerer's preference), whether any was offered, and why
// the others before it were not usable.
func offeredCrypto(m *sdp.MediaDescription) (*sdesCrypto, bool, []error) {
	var errs []error
	n := 0
	for _, a := range m.Attributes {
		if a.Key != "crypto" {
			continue
		}
		if n++; n > maxCryptoLines {
			errs = append(errs, fmt.Errorf("%w: more than %d lines", errCrypto, maxCryptoLines))
			break
		}
		c, err := parseCrypto(a.Value)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		return &c, true, errs
	}
	return nil, n > 0, errs
}

// mediaPolicy is what a call's route and transport allow of SRTP.
type mediaPolicy struct {
	mode      string // srtpOff, srtpOptional, srtpMandatory
	keys      bool   // SDES keys may travel: over TLS, or the route's allow_sdes_without_tls
	transport string // the INVITE's transport, for the log
}

// policy is r's media policy for a call whose INVITE is req.
func (r *route) policy(req *sipmsg.Request) mediaPolicy {
	tls := overTLS(req)
	return mediaPolicy{mode: r.srtpMode(), keys: tls || r.AllowSDESWithoutTLS, transport: req.Transport()}
}

func (r Route) srtpMode() string {
	if r.SRTP == "" {
		return srtpOptional
	}
	return r.SRTP
}

// secure applies p to o's streams: it drops the keys of best-effort
// offers the policy does not take (answered plain), and returns
// ErrMediaSecurity naming why when a stream cannot be taken as offered.
func (o *offer) secure(p mediaPolicy) error {
	for i := range o.streams {
		st := &o.streams[i]
		proto := strings.Join(st.protos, "/")
		if p.mode == srtpOff {
			if st.secure {
				return fmt.Errorf("%w: stream %d is %s; the route has srtp: off", ErrMediaSecurity, i, proto)
			}
			st.crypto = nil
			continue
		}
		if dtlsProto(proto) {
			switch {
			case st.dtlsErr != nil:
				return fmt.Errorf("stream %d: %w", i, st.dtlsErr)
			case !p.keys:
				return fmt.Errorf("%w: stream %d offers DTLS-SRTP with its fingerprint over %s, not TLS (the route's allow_sdes_without_tls is false)",
					ErrMediaSecurity, i, p.transport)
			}
			continue
		}
		if st.offersKeys && !p.keys {
			if st.secure || p.mode == srtpMandatory {
				return fmt.Errorf("%w: stream %d offers SDES keys over %s, not TLS (the route's allow_sdes_without_tls is false)",
					ErrMediaSecurity, i, p.transport)
			}
			st.crypto = nil // a best-effort offer, answered plain
			continue
		}
		switch {
		case st.crypto != nil:
		case st.secure || p.mode == srtpMandatory && len(st.cryptoErrs) > 0:
			return fmt.Errorf("%w: stream %d is %s with no usable a=crypto (srtp: %s): %w",
				ErrMediaSecurity, i, proto, p.mode, errors.Join(st.cryptoErrs...))
		case p.mode == srtpMandatory:
			return fmt.Errorf("%w: stream %d is plain %s; the route has srtp: mandatory", ErrMediaSecurity, i, proto)
		}
	}
	return nil
}

// rekeyed checks a re-offer against the call's last offer: a stream keeps
// SRTP or plain RTP as the call began (turning SRTP off would send the
// rest of the call in clear; turning it on is a new call's business), and
// it returns the streams whose key changed (RFC 4568 section 7.1.4).
func (o *offer) rekeyed(prev *offer) ([]int, error) {
	var changed []int
	for i, st := range o.streams {
		was := prev.streams[i].crypto
		wasDTLS := prev.streams[i].dtls
		switch {
		case (st.dtls == nil) != (wasDTLS == nil) || st.dtls != nil && st.dtls.fingerprint != wasDTLS.fingerprint:
			return nil, fmt.Errorf("%w: the re-offer changes the DTLS-SRTP of stream %d (a new association is not taken)", ErrMediaSecurity, i)
		case (st.crypto == nil) != (was == nil):
			return nil, fmt.Errorf("%w: the re-offer turns SRTP of stream %d on or off", ErrMediaSecurity, i)
		case st.crypto != nil && !st.crypto.key.Equal(was.key):
			changed = append(changed, i)
		}
	}
	return changed, nil
}

// rekey gives the receiver the re-offer's new keys of streams; the door's
// own key stays, unless the suite changed. c.mu is held.
func (c *call) rekey(o *offer, streams []int) error {
	for _, i := range streams {
		st := o.streams[i]
		local := c.keys[i]
		if local.Suite != st.crypto.key.Suite {
			k, err := rtp.NewSRTPKey(st.crypto.key.Suite)
			if err != nil {
				return err
			}
			local = &k
		}
		if err := c.recv.Rekey(i, &rtp.SRTP{Remote: st.crypto.key, Local: *local, ReplayWindow: st.crypto.window}); err != nil {
			return err
		}
		c.keys[i] = local
	}
	return nil
}

// cryptoAttr is the answer's a=crypto for a stream: the offer's tag and
// suite, the door's key.
func cryptoAttr(c *sdesCrypto, local rtp.SRTPKey) sdp.Attribute {
	return sdp.NewAttribute("crypto", fmt.Sprintf("%d %s inline:%s", c.tag, local.Suite, base64.StdEncoding.EncodeToString(local.Key)))
}

// srtpSuites names each stream's suite ("none" for plain RTP), for logs.
func (c *call) srtpSuites(o *offer) string {
	names := make([]string, len(o.streams))
	for i, st := range o.streams {
		names[i] = rtp.SuiteNone.String()
		if st.crypto != nil && i < len(c.keys) && c.keys[i] != nil {
			names[i] = st.crypto.key.Suite.String()
		}
		if st.dtls != nil {
			names[i] = "DTLS-SRTP"
		}
	}
	return strings.Join(names, ",")
}
