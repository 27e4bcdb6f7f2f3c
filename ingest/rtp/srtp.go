package rtp

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"

	"github.com/pion/srtp/v3"
	"github.com/pion/transport/v4/replaydetector"
)

// SRTP (RFC 3711) is undone with pion/srtp, which keeps the replay window
// and the rollover counter of each source as the RFC says; this file bounds
// what a hostile sender can make it hold. pion keeps state for every SSRC a
// packet names, even one whose tag fails, so a stream decrypts each
// authenticated source with a context of its own (at most maxSRTPSources,
// the least recently used evicted), and packets of an unknown SSRC go
// through one probe context that is thrown away after probeMisses failures.
// Only a sender holding the key creates a source; a flood of forged SSRCs
// costs a bounded map and one key derivation per probeMisses packets.

// Suite is an SRTP crypto suite a stream may use (RFC 4568, 6188, 7714).
type Suite uint8

// The suites pion/srtp implements, by their SDES names.
const (
	SuiteNone          Suite = iota
	AESCM128HMACSHA180       // AES_CM_128_HMAC_SHA1_80
	AESCM128HMACSHA132       // AES_CM_128_HMAC_SHA1_32
	AES256CMHMACSHA180       // AES_256_CM_HMAC_SHA1_80
	AES256CMHMACSHA132       // AES_256_CM_HMAC_SHA1_32
	AEADAES128GCM            // AEAD_AES_128_GCM
	AEADAES256GCM            // AEAD_AES_256_GCM
)

var suites = []struct {
	suite   Suite
	name    string
	profile srtp.ProtectionProfile
}{
	{AESCM128HMACSHA180, "AES_CM_128_HMAC_SHA1_80", srtp.ProtectionProfileAes128CmHmacSha1_80},
	{AESCM128HMACSHA132, "AES_CM_128_HMAC_SHA1_32", srtp.ProtectionProfileAes128CmHmacSha1_32},
	{AES256CMHMACSHA180, "AES_256_CM_HMAC_SHA1_80", srtp.ProtectionProfileAes256CmHmacSha1_80},
	{AES256CMHMACSHA132, "AES_256_CM_HMAC_SHA1_32", srtp.ProtectionProfileAes256CmHmacSha1_32},
	{AEADAES128GCM, "AEAD_AES_128_GCM", srtp.ProtectionProfileAeadAes128Gcm},
	{AEADAES256GCM, "AEAD_AES_256_GCM", srtp.ProtectionProfileAeadAes256Gcm},
}

// SuiteByName finds a suite by its SDES name (case-sensitive, as RFC 4568
// registers them); SuiteNone if unknown.
func SuiteByName(name string) Suite {
	for _, s := range suites {
		if s.name == name {
			return s.suite
		}
	}
	return SuiteNone
}

func (s Suite) String() string {
	for _, e := range suites {
		if e.suite == s {
			return e.name
		}
	}
	return "none"
}

func (s Suite) profile() srtp.ProtectionProfile {
	for _, e := range suites {
		if e.suite == s {
			return e.profile
		}
	}
	return 0
}

// KeyLen is the length of the suite's master key plus master salt, the
// bytes of an SDES inline key; 0 for SuiteNone.
func (s Suite) KeyLen() int {
	p := s.profile()
	k, err1 := p.KeyLen()
	salt, err2 := p.SaltLen()
	if err1 != nil || err2 != nil {
		return 0
	}
	return k + salt
}

// maxMKILen bounds an MKI (RFC 3711 section 3.1): 4 bytes index 2^32 keys.
const maxMKILen = 4

// SRTPKey is one direction's master key. Its String, Format and LogValue
// never show the key, so a key logged or wrapped in an error by mistake
// stays secret.
type SRTPKey struct {
	Suite Suite
	// Key is the master key followed by the master salt (Suite.KeyLen
	// bytes).
	Key []byte
	// MKI, when set, is the master key identifier every packet carries
	// (1 to 4 bytes).
	MKI []byte
}

// NewSRTPKey draws a random master key and salt for suite.
func NewSRTPKey(suite Suite) (SRTPKey, error) {
	n := suite.KeyLen()
	if n == 0 {
		return SRTPKey{}, fmt.Errorf("rtp: no SRTP suite %d", suite)
	}
	k := SRTPKey{Suite: suite, Key: make([]byte, n)}
	if _, err := rand.Read(k.Key); err != nil {
		return SRTPKey{}, fmt.Errorf("rtp: srtp key: %w", err)
	}
	return k, nil
}

// Check reports whether the key fits its suite.
func (k SRTPKey) Check() error {
	n := k.Suite.KeyLen()
	switch {
	case n == 0:
		return fmt.Errorf("rtp: no SRTP suite %d", k.Suite)
	case len(k.Key) != n:
		return fmt.Errorf("rtp: %s takes a %d-byte key and salt, not %d", k.Suite, n, len(k.Key))
	case len(k.MKI) > maxMKILen:
		return fmt.Errorf("rtp: MKI of %d bytes, at most %d", len(k.MKI), maxMKILen)
	}
	return nil
}

// Equal reports whether two keys are the same.
func (k SRTPKey) Equal(o SRTPKey) bool {
	return k.Suite == o.Suite && string(k.Key) == string(o.Key) && string(k.MKI) == string(o.MKI)
}

func (k SRTPKey) String() string { return k.Suite.String() + " key [redacted]" }

// Format prints String for every verb (%v, %+v, %#v, %x...).
func (k SRTPKey) Format(f fmt.State, _ rune) { fmt.Fprint(f, k.String()) }

// LogValue logs the suite only.
func (k SRTPKey) LogValue() slog.Value { return slog.StringValue(k.String()) }

// context builds a pion context for k; replay windows of window packets
// set *replayed when they refuse a packet.
func (k SRTPKey) context(window uint, replayed *bool) (*srtp.Context, error) {
	if err := k.Check(); err != nil {
		return nil, err
	}
	p := k.Suite.profile()
	kl, _ := p.KeyLen()
	opts := []srtp.ContextOption{
		srtp.SRTPReplayDetectorFactory(func() replaydetector.ReplayDetector {
			return flagging{replaydetector.New(window, maxSRTPIndex), replayed}
		}),
		srtp.SRTCPReplayDetectorFactory(func() replaydetector.ReplayDetector {
			return flagging{replaydetector.New(window, maxSRTCPIndex), replayed}
		}),
	}
	if len(k.MKI) > 0 {
		opts = append(opts, srtp.MasterKeyIndicator(k.MKI))
	}
	c, err := srtp.CreateContext(k.Key[:kl], k.Key[kl:], p, opts...)
	if err != nil {
		return nil, fmt.Errorf("rtp: srtp context of %s: %w", k.Suite, err) // pion's errors name no key bytes
	}
	return c, nil
}

// The largest SRTP index (48 bits: rollover counter and sequence number)
// and SRTCP index (31 bits), RFC 3711 section 3.3.1 and 3.4.
const (
	maxSRTPIndex  = 1<<48 - 1
	maxSRTCPIndex = 1<<31 - 1
)

// flagging is a replay window that notes a refusal, so a refused packet
// is told from a forged one without reading pion's unexported error.
type flagging struct {
	replaydetector.ReplayDetector
	hit *bool
}

func (f flagging) Check(index uint64) (func() bool, bool) {
	accept, ok := f.ReplayDetector.Check(index)
	if !ok {
		*f.hit = true
	}
	return accept, ok
}

// SRTP holds the keys of a stream protected by SRTP.
type SRTP struct {
	// Remote is the peer's key: it protects what the peer sends.
	Remote SRTPKey
	// Local is the door's key (its SDP answer's): it protects the RTCP
	// reports the receiver sends.
	Local SRTPKey
	// ReplayWindow is the packets of each source's replay window; 0 takes
	// defaultReplayWindow; at least 64 (RFC 3711 section 3.3.2).
	ReplayWindow uint
}

const (
	defaultReplayWindow = 128
	maxReplayWindow     = 1024
	maxSRTPSources      = 4  // authenticated SSRCs a stream keeps contexts for
	probeMisses         = 64 // failures before the probe context is rebuilt
)

// Why a packet was not decrypted.
var (
	// ErrSRTPAuth is a packet whose authentication tag does not verify (or
	// that is too short to carry one, or names an unknown MKI): forged,
	// damaged, or plain RTP on an SRTP stream.
	ErrSRTPAuth = errors.New("rtp: srtp authentication failed")
	// ErrSRTPReplay is a packet already received, or older than the
	// source's replay window.
	ErrSRTPReplay = errors.New("rtp: srtp replayed packet")
)

// srtpSource is one authenticated SSRC's context.
type srtpSource struct {
	ctx  *srtp.Context
	used uint64
}

// unprotector decrypts one stream's SRTP and SRTCP. It is not safe for
// concurrent use: the receiver's Run goroutine owns it.
type unprotector struct {
	// prev is the stream's key before a Rekey: packets sent under it
	// before the peer switched may still be on their way. It is tried on a
	// packet the new key does not authenticate, until one does.
	prev    *unprotector
	scratch []byte // a copy of the packet while prev may be tried
	key     SRTPKey
	window  uint
	sources map[uint32]*srtpSource
	probe   *srtp.Context
	misses  int
	clock   uint64
	// replayed is set by a replay window that refused the packet being
	// decrypted.
	replayed bool
	out      *srtp.Context // the door's key, for its RTCP
}

func newUnprotector(s *SRTP) (*unprotector, error) {
	window := s.ReplayWindow
	if window == 0 {
		window = defaultReplayWindow
	}
	window = min(max(window, 64), maxReplayWindow)
	u := &unprotector{key: s.Remote, window: window, sources: map[uint32]*srtpSource{}}
	if err := s.Remote.Check(); err != nil {
		return nil, err
	}
	if s.Local.Suite != SuiteNone {
		out, err := s.Local.context(window, new(bool))
		if err != nil {
			return nil, err
		}
		u.out = out
	}
	return u, nil
}

// unprotect decrypts buf in place (SRTCP when rtcp) and returns the plain
// packet, or an error wrapping ErrSRTPAuth or ErrSRTPReplay.
func (u *unprotector) unprotect(buf []byte, rtcp bool) ([]byte, error) {
	at := 8 // an RTP header's SSRC
	if rtcp {
		at = 4 // the RTCP sender's
	}
	if len(buf) < at+4 {
		return nil, fmt.Errorf("%w: %d-byte packet", ErrSRTPAuth, len(buf))
	}
	if u.prev != nil {
		u.scratch = append(u.scratch[:0], buf...) // a failed AEAD open clears buf
		out, err := u.unprotectOwn(buf, rtcp)
		switch {
		case err == nil:
			u.prev, u.scratch = nil, nil // the peer uses the new key
			return out, nil
		case errors.Is(err, ErrSRTPReplay):
			return nil, err
		}
		if out, perr := u.prev.unprotect(u.scratch, rtcp); perr == nil {
			return buf[:copy(buf, out)], nil // the packet keeps its own bytes; scratch is reused
		}
		return nil, err
	}
	return u.unprotectOwn(buf, rtcp)
}

// unprotectOwn is unprotect under the stream's current key only.
func (u *unprotector) unprotectOwn(buf []byte, rtcp bool) ([]byte, error) {
	at := 8 // an RTP header's SSRC
	if rtcp {
		at = 4 // the RTCP sender's
	}
	ssrc := binary.BigEndian.Uint32(buf[at:])
	u.clock++
	if src := u.sources[ssrc]; src != nil {
		src.used = u.clock
		return u.decrypt(src.ctx, buf, rtcp)
	}
	if u.probe == nil {
		c, err := u.key.context(u.window, &u.replayed)
		if err != nil {
			return nil, err
		}
		u.probe, u.misses = c, 0
	}
	out, err := u.decrypt(u.probe, buf, rtcp)
	if err != nil {
		if u.misses++; u.misses >= probeMisses {
			u.probe = nil
		}
		return nil, err
	}
	if len(u.sources) >= maxSRTPSources {
		var oldest uint32
		var at uint64 = 1<<64 - 1
		for k, s := range u.sources {
			if s.used < at {
				oldest, at = k, s.used
			}
		}
		delete(u.sources, oldest)
	}
	u.sources[ssrc] = &srtpSource{ctx: u.probe, used: u.clock}
	u.probe = nil
	return out, nil
}

// decrypt undoes one packet in place with c.
func (u *unprotector) decrypt(c *srtp.Context, buf []byte, rtcp bool) ([]byte, error) {
	var out []byte
	var err error
	u.replayed = false
	if rtcp {
		out, err = c.DecryptRTCP(buf, buf, nil)
	} else {
		out, err = c.DecryptRTP(buf, buf, nil)
	}
	switch {
	case err == nil:
		return out, nil
	case u.replayed:
		return nil, ErrSRTPReplay
	}
	return nil, fmt.Errorf("%w: %w", ErrSRTPAuth, err)
}

// protectRTCP encrypts an RTCP report with the door's key; plain when the
// stream has none.
func (u *unprotector) protectRTCP(b []byte) ([]byte, error) {
	if u.out == nil {
		return b, nil
	}
	return u.out.EncryptRTCP(nil, b, nil)
}

// srtpFailed counts a packet of s that did not decrypt; the first of a
// stream is logged (never its bytes).
func (r *Receiver) srtpFailed(s *streamState, in input, rtcp bool, err error) {
	replay := errors.Is(err, ErrSRTPReplay)
	if replay {
		s.stats.SRTPReplayed++
	} else {
		s.stats.SRTPAuthFailed++
	}
	if !s.srtpWarn {
		s.srtpWarn = true
		r.log.Warn("srtp packet dropped", "channel", s.ch, "source", in.from.String(), "rtcp", rtcp, "replay", replay,
			"bytes", len(in.buf), "error", err)
	}
}

// Rekey gives stream a new key (a re-INVITE's a=crypto, RFC 4568 section
// 7.1.4); Run applies it at its next packet or tick, keeping the old key
// for packets already on their way until the first packet under the new
// one authenticates. It may be called from any goroutine while Run runs.
func (r *Receiver) Rekey(stream int, s *SRTP) error {
	if stream < 0 || stream >= len(r.streams) || s == nil {
		return fmt.Errorf("rtp: no stream %d to rekey", stream)
	}
	u, err := newUnprotector(s)
	if err != nil {
		return err
	}
	r.mu.Lock()
	if r.rekeys == nil {
		r.rekeys = map[int]*unprotector{}
	}
	r.rekeys[stream] = u
	r.mu.Unlock()
	r.upd.Store(true)
	return nil
}

// takeRekeys applies the pending keys in Run's goroutine; r.mu is held.
func (r *Receiver) takeRekeys() {
	for i, u := range r.rekeys {
		s := r.streams[i]
		if s.srtp != nil {
			s.srtp.prev = nil // two rekeys in flight: the oldest key is done
			u.prev = s.srtp
		}
		s.srtp = u
	}
	r.rekeys = nil
}
