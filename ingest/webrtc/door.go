package webrtc

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	pionwebrtc "github.com/pion/webrtc/v4"

	"github.com/earshot-dev/earshot/ingest"
	"github.com/earshot-dev/earshot/ingest/codec"
	"github.com/earshot-dev/earshot/ingest/media"
)

// Attacher attaches an audio-only door to the live session a session token
// names (the daemon's job service). The session keeps any WebSocket client
// as the listener of its messages. CheckSessionToken checks a token as
// AttachAudio does (an error of kind errcode.ErrUnauthorized for a forged,
// expired or revoked one) without touching its session, for about the cost
// of one HMAC.
type Attacher interface {
	AttachAudio(ctx context.Context, token, from string) (ingest.Session, error)
	CheckSessionToken(token string) error
}

// stopTimeout bounds finalising one recording (recogniser flush,
// post-processing) when the door ends it on its own.
const stopTimeout = 2 * time.Minute

// Door is the WHIP door: one PeerConnection per live session.
type Door struct {
	cfg    Config
	att    Attacher
	log    *slog.Logger
	pionLF *pionLogs
	lo, hi uint16

	closing   chan struct{} // closed by Close
	closeOnce sync.Once
	wg        sync.WaitGroup // one supervise per peer

	mu     sync.Mutex
	peers  map[string]*peer        // guarded by mu: by session id; nil while an offer for it is being answered
	closed bool                    // guarded by mu
	cert   *pionwebrtc.Certificate // guarded by mu: DTLS certificate shared by every peer, renewed before it expires
}

// New checks cfg (after SetDefaults) and builds a door. It binds nothing and
// starts no goroutine: ports are bound per offer. logger may be nil.
func New(cfg Config, attacher Attacher, logger *slog.Logger) (*Door, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if attacher == nil {
		return nil, errors.New("webrtc: nil attacher")
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	lo, hi, _ := cfg.portRange()
	d := &Door{
		cfg: cfg, att: attacher, log: logger, pionLF: &pionLogs{log: logger},
		lo: lo, hi: hi, closing: make(chan struct{}), peers: map[string]*peer{},
	}
	if _, err := d.certificate(); err != nil {
		return nil, err
	}
	return d, nil
}

// certificate returns the door's DTLS certificate, made anew when the
// current one expires within a day (pion's last a month). Sharing one keeps
// key generation off the offer path.
func (d *Door) certificate() (pionwebrtc.Certificate, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cert == nil || time.Until(d.cert.Expires()) < 24*time.Hour {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return pionwebrtc.Certificate{}, fmt.Errorf("webrtc: generate dtls key: %w", err)
		}
		c, err := pionwebrtc.GenerateCertificate(key)
		if err != nil {
			return pionwebrtc.Certificate{}, fmt.Errorf("webrtc: generate dtls certificate: %w", err)
		}
		d.cert = c
	}
	return *d.cert, nil
}

// newAPI builds the pion API for one peer: a MediaEngine with only Opus,
// PCMU, PCMA and telephone-event (DTMF, RFC 4733) at 8 and 48 kHz (so
// nothing else can be negotiated) and the ICE settings.
func (d *Door) newAPI() (*pionwebrtc.API, error) {
	me := &pionwebrtc.MediaEngine{}
	for _, c := range append([]pionwebrtc.RTPCodecParameters{opusParams, pcmuParams, pcmaParams}, eventParams...) {
		if err := me.RegisterCodec(c, pionwebrtc.RTPCodecTypeAudio); err != nil {
			return nil, fmt.Errorf("webrtc: register %s: %w", c.MimeType, err)
		}
	}
	var se pionwebrtc.SettingEngine
	se.LoggerFactory = d.pionLF
	if err := se.SetEphemeralUDPPortRange(d.lo, d.hi); err != nil {
		return nil, fmt.Errorf("webrtc: port range: %w", err)
	}
	un, err := newUDPNet()
	if err != nil {
		return nil, fmt.Errorf("webrtc: network: %w", err)
	}
	se.SetNet(un)
	se.SetNetworkTypes([]pionwebrtc.NetworkType{pionwebrtc.NetworkTypeUDP4, pionwebrtc.NetworkTypeUDP6})
	se.SetIncludeLoopbackCandidate(d.cfg.IncludeLoopback)
	if d.cfg.PublicIP != "" {
		// NAT 1:1: host candidates of the public IP's family carry it instead.
		nt := pionwebrtc.NetworkTypeUDP6
		if net.ParseIP(d.cfg.PublicIP).To4() != nil {
			nt = pionwebrtc.NetworkTypeUDP4
		}
		err := se.SetICEAddressRewriteRules(pionwebrtc.ICEAddressRewriteRule{
			External: []string{d.cfg.PublicIP}, AsCandidateType: pionwebrtc.ICECandidateTypeHost,
			Mode: pionwebrtc.ICEAddressRewriteReplace, Networks: []pionwebrtc.NetworkType{nt},
		})
		if err != nil {
			return nil, fmt.Errorf("webrtc: public_ip: %w", err)
		}
	}
	return pionwebrtc.NewAPI(pionwebrtc.WithMediaEngine(me), pionwebrtc.WithSettingEngine(se)), nil
}

// The door's codecs as pion registers them, from the codec table.
var (
	pcmuParams = g711Params(codec.PCMU, pionwebrtc.MimeTypePCMU)
	pcmaParams = g711Params(codec.PCMA, pionwebrtc.MimeTypePCMA)
	opusParams = pionwebrtc.RTPCodecParameters{
		RTPCodecCapability: pionwebrtc.RTPCodecCapability{MimeType: pionwebrtc.MimeTypeOpus,
			ClockRate: uint32(codec.Opus.ClockRate()), Channels: 2, SDPFmtpLine: codec.OpusFmtp},
		PayloadType: codec.OpusPayloadType,
	}
)

// mimeTelephoneEvent is RFC 4733's media type.
const mimeTelephoneEvent = "audio/telephone-event"

// eventParams are telephone-event at the clocks browsers offer it (48 kHz
// beside Opus, 8 kHz beside G.711); the answer keeps the offer's payload
// types.
var eventParams = []pionwebrtc.RTPCodecParameters{
	{RTPCodecCapability: pionwebrtc.RTPCodecCapability{MimeType: mimeTelephoneEvent, ClockRate: 48000, Channels: 1, SDPFmtpLine: "0-15"}, PayloadType: 126},
	{RTPCodecCapability: pionwebrtc.RTPCodecCapability{MimeType: mimeTelephoneEvent, ClockRate: 8000, Channels: 1, SDPFmtpLine: "0-15"}, PayloadType: 101},
}

func g711Params(c codec.Codec, mime string) pionwebrtc.RTPCodecParameters {
	pt, _ := c.StaticPT()
	return pionwebrtc.RTPCodecParameters{
		RTPCodecCapability: pionwebrtc.RTPCodecCapability{MimeType: mime, ClockRate: uint32(c.ClockRate()), Channels: 1},
		PayloadType:        pionwebrtc.PayloadType(pt),
	}
}

// params is c's registration.
func params(c codec.Codec) pionwebrtc.RTPCodecParameters {
	switch c {
	case codec.PCMA:
		return pcmaParams
	case codec.Opus:
		return opusParams
	}
	return pcmuParams
}

// Offer answers a WHIP offer (RFC 9725 §4.2) for live session sessionID,
// authorised by its session token: it negotiates the codec the session was
// opened for (PCMU for wav/ulaw 8 kHz, PCMA for wav/alaw 8 kHz, Opus for
// wav/pcm 16-bit 16 kHz, decoded by the door), gathers host candidates and returns the complete SDP
// answer and the new resource's id (an unguessable capability: End needs
// it). The token is checked first: a forged one costs about what a
// malformed one does, and neither reserves the session nor builds a
// PeerConnection. The client's mistakes are checked before the session is
// touched; only a session opened in another format is found after
// attaching (it then stays attached without audio until its idle timeout,
// and a WebSocket client may still take it over). from is the client's
// address (the audit trail's source of the attachment).
func (d *Door) Offer(ctx context.Context, sessionID, token, from string, offer []byte) (answer []byte, resource string, err error) {
	if len(offer) > d.cfg.MaxOfferBytes {
		return nil, "", badOffer("%d bytes > limit %d", len(offer), d.cfg.MaxOfferBytes)
	}
	if id, _, ok := strings.Cut(token, "."); !ok || id != sessionID {
		return nil, "", ErrBadToken
	}
	if err := d.att.CheckSessionToken(token); err != nil {
		return nil, "", err
	}
	offered, err := checkOffer(offer)
	if err != nil {
		return nil, "", err
	}
	// Reserve the session so a concurrent second offer gets ErrConnected.
	d.mu.Lock()
	switch _, busy := d.peers[sessionID]; {
	case d.closed:
		d.mu.Unlock()
		return nil, "", ErrClosed
	case busy:
		d.mu.Unlock()
		return nil, "", ErrConnected
	}
	d.peers[sessionID] = nil
	d.mu.Unlock()
	var p *peer
	defer func() {
		if p == nil {
			d.mu.Lock()
			delete(d.peers, sessionID)
			d.mu.Unlock()
		}
	}()

	start := time.Now()
	pc, err := d.newPeerConnection()
	if err != nil {
		return nil, "", err
	}
	ok := false
	defer func() {
		if !ok {
			pc.Close()
		}
	}()
	if err := pc.SetRemoteDescription(pionwebrtc.SessionDescription{Type: pionwebrtc.SDPTypeOffer, SDP: string(offer)}); err != nil {
		return nil, "", badOffer("%v", err)
	}
	// The attachment lasts until the peer stops the session (supervise),
	// not as long as this offer's request.
	sess, err := d.att.AttachAudio(context.WithoutCancel(ctx), token, from)
	if err != nil {
		return nil, "", err
	}
	want, err := sessionCodec(sess)
	if err != nil {
		return nil, "", err
	}
	if !offered.has(want) {
		return nil, "", refuse(ErrNoCodec, "the session's encoding needs %s, the offer has %s", want, offered)
	}
	for _, t := range pc.GetTransceivers() {
		if t.Kind() == pionwebrtc.RTPCodecTypeAudio {
			if err := setCodecs(t, params(want)); err != nil {
				return nil, "", refuse(ErrNoCodec, "%v", err)
			}
		}
	}
	p = newPeer(d, sess, pc, want)
	ans, err := pc.CreateAnswer(nil)
	if err != nil {
		p = nil
		return nil, "", badOffer("create answer: %v", err)
	}
	gathered := pionwebrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(ans); err != nil {
		p = nil
		return nil, "", fmt.Errorf("webrtc: set local description: %w", err)
	}
	timer := time.NewTimer(d.cfg.GatherTimeout)
	defer timer.Stop()
	select {
	case <-gathered:
	case <-timer.C:
		// Answer with what was gathered so far.
	case <-ctx.Done():
		p = nil
		return nil, "", ctx.Err()
	}
	local := pc.LocalDescription()
	if local == nil {
		p = nil
		return nil, "", errors.New("webrtc: no local description")
	}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		p = nil
		return nil, "", ErrClosed
	}
	d.peers[sessionID] = p
	d.wg.Go(p.supervise)
	d.mu.Unlock()
	ok = true
	d.log.Info("whip peer answered", "session_id", sessionID, "codec", want.String(),
		"elapsed_ms", time.Since(start).Milliseconds())
	d.log.Debug("whip answer", "session_id", sessionID, "sdp", local.SDP)
	return []byte(local.SDP), p.resource, nil
}

// setCodecs has a transceiver answer with c and the telephone-events the
// offer has beside it (pion refuses a preference the offer lacks).
func setCodecs(t *pionwebrtc.RTPTransceiver, c pionwebrtc.RTPCodecParameters) error {
	prefs := []pionwebrtc.RTPCodecParameters{c}
	for _, e := range eventParams {
		if t.SetCodecPreferences(append(prefs, e)) == nil {
			prefs = append(prefs, e)
		}
	}
	return t.SetCodecPreferences(prefs)
}

func (d *Door) newPeerConnection() (*pionwebrtc.PeerConnection, error) {
	api, err := d.newAPI()
	if err != nil {
		return nil, err
	}
	cert, err := d.certificate()
	if err != nil {
		return nil, err
	}
	pc, err := api.NewPeerConnection(pionwebrtc.Configuration{
		Certificates: []pionwebrtc.Certificate{cert},
		BundlePolicy: pionwebrtc.BundlePolicyMaxBundle,
	})
	if err != nil {
		return nil, fmt.Errorf("webrtc: new peer connection: %w", err)
	}
	return pc, nil
}

// sessionCodec is the codec that fills the session's format, or ErrFormat
// naming the field that rules WebRTC out.
func sessionCodec(s ingest.Session) (codec.Codec, error) {
	fm := s.Format()
	if c := codec.ForFormat(fm, codec.Opus); c != codec.None {
		return c, nil
	}
	switch {
	case fm.Channels != 1:
		return codec.None, refuse(ErrFormat, "channels: the session was opened for %d channels; WebRTC carries 1", fm.Channels)
	case fm.Encoding == media.MuLaw || fm.Encoding == media.ALaw:
		return codec.None, refuse(ErrFormat, "sample_rate: the session was opened for %d Hz; G.711 over WebRTC is 8000", fm.SampleRate)
	case fm.Encoding == media.LinearPCM && fm.BitDepth == 16:
		return codec.None, refuse(ErrFormat, "sample_rate: the session was opened for %d Hz; WebRTC's wav/pcm (Opus, decoded by earshot) is 16000", fm.SampleRate)
	case fm.Encoding == media.LinearPCM:
		return codec.None, refuse(ErrFormat, "bit_depth: the session was opened for %d bits; WebRTC's wav/pcm (Opus, decoded by earshot) is 16", fm.BitDepth)
	}
	return codec.None, refuse(ErrFormat, "encoding: the session was opened for %s; WebRTC carries wav/ulaw (PCMU), wav/alaw (PCMA) or wav/pcm at 16 kHz (Opus)", fm.Encoding)
}

// End deletes a WHIP resource (RFC 9725 §4.3): it closes the peer and
// stops the session's recording, which then finalises as any live job
// (post-processing, result, callbacks). It returns when the recording has
// been finalised or ctx ends, with Session.Stop's error.
func (d *Door) End(ctx context.Context, sessionID, resource string) error {
	d.mu.Lock()
	p := d.peers[sessionID]
	d.mu.Unlock()
	if p == nil || subtle.ConstantTimeCompare([]byte(p.resource), []byte(resource)) != 1 {
		return ErrNoResource
	}
	p.requestEnd()
	select {
	case <-p.ended:
		return p.stopErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Peers is the number of sessions with a WebRTC peer (for metrics).
func (d *Door) Peers() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, p := range d.peers {
		if p != nil {
			n++
		}
	}
	return n
}

// Close closes every peer, stops their recordings (each finalises with what
// it received) and waits for every goroutine the door started. It is
// idempotent; it must not be called from a Session method.
func (d *Door) Close() error {
	d.closeOnce.Do(func() {
		d.mu.Lock()
		d.closed = true
		d.mu.Unlock()
		close(d.closing)
	})
	d.wg.Wait()
	return nil
}

// newResource is a random WHIP resource id: 128 bits, hex.
func newResource() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
