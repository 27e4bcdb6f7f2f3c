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
	"github.com/earshot-dev/earshot/ingest/media"
)

// Attacher attaches an audio-only door to the live session a session token
// names (the daemon's job service). The session keeps any WebSocket client
// as the listener of its messages.
type Attacher interface {
	AttachAudio(ctx context.Context, token string) (ingest.Session, error)
}

// formatted is what the door needs of a Session beyond the contract: the
// audio format it was opened for (the daemon's Attachment has it).
type formatted interface {
	Format() media.Format
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

// newAPI builds the pion API for one peer: a MediaEngine with only PCMU and
// PCMA (so nothing else can be negotiated) and the ICE settings.
func (d *Door) newAPI() (*pionwebrtc.API, error) {
	me := &pionwebrtc.MediaEngine{}
	for _, c := range []pionwebrtc.RTPCodecParameters{pcmuParams, pcmaParams} {
		if err := me.RegisterCodec(c, pionwebrtc.RTPCodecTypeAudio); err != nil {
			return nil, fmt.Errorf("webrtc: register %s: %w", c.MimeType, err)
		}
	}
	var se pionwebrtc.SettingEngine
	se.LoggerFactory = d.pionLF
	if err := se.SetEphemeralUDPPortRange(d.lo, d.hi); err != nil {
		return nil, fmt.Errorf("webrtc: port range: %w", err)
	}
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

var (
	pcmuParams = pionwebrtc.RTPCodecParameters{
		RTPCodecCapability: pionwebrtc.RTPCodecCapability{MimeType: pionwebrtc.MimeTypePCMU, ClockRate: 8000, Channels: 1},
		PayloadType:        0,
	}
	pcmaParams = pionwebrtc.RTPCodecParameters{
		RTPCodecCapability: pionwebrtc.RTPCodecCapability{MimeType: pionwebrtc.MimeTypePCMA, ClockRate: 8000, Channels: 1},
		PayloadType:        8,
	}
)

// Offer answers a WHIP offer (RFC 9725 §4.2) for live session sessionID,
// authorised by its session token: it negotiates the G.711 law the session
// was opened for, gathers host candidates and returns the complete SDP
// answer and the new resource's id (an unguessable capability: End needs
// it). The client's mistakes are checked before the session is touched;
// only a session opened in another format is found after attaching (it then
// stays attached without audio until its idle timeout, and a WebSocket
// client may still take it over).
func (d *Door) Offer(ctx context.Context, sessionID, token string, offer []byte) (answer []byte, resource string, err error) {
	if len(offer) > d.cfg.MaxOfferBytes {
		return nil, "", fmt.Errorf("%w: %d bytes > limit %d", ErrBadOffer, len(offer), d.cfg.MaxOfferBytes)
	}
	if id, _, ok := strings.Cut(token, "."); !ok || id != sessionID {
		return nil, "", ErrBadToken
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
		return nil, "", fmt.Errorf("%w: %v", ErrBadOffer, err)
	}
	sess, err := d.att.AttachAudio(ctx, token)
	if err != nil {
		return nil, "", err
	}
	law, err := sessionCodec(sess)
	if err != nil {
		return nil, "", err
	}
	if !offered.has(law) {
		return nil, "", fmt.Errorf("%w: the session's encoding needs %s, the offer has %s", ErrNoG711, law, offered)
	}
	want := pcmuParams
	if law == codecPCMA {
		want = pcmaParams
	}
	for _, t := range pc.GetTransceivers() {
		if t.Kind() == pionwebrtc.RTPCodecTypeAudio {
			if err := t.SetCodecPreferences([]pionwebrtc.RTPCodecParameters{want}); err != nil {
				return nil, "", fmt.Errorf("%w: %v", ErrNoG711, err)
			}
		}
	}
	p = newPeer(d, sess, pc, law)
	ans, err := pc.CreateAnswer(nil)
	if err != nil {
		p = nil
		return nil, "", fmt.Errorf("%w: create answer: %v", ErrBadOffer, err)
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
	d.log.Info("whip peer answered", "session_id", sessionID, "codec", law.String(),
		"elapsed_ms", time.Since(start).Milliseconds())
	d.log.Debug("whip answer", "session_id", sessionID, "sdp", local.SDP)
	return []byte(local.SDP), p.resource, nil
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

// sessionCodec is the G.711 law the session takes, or ErrFormat naming
// the field that rules WebRTC out.
func sessionCodec(s ingest.Session) (codec, error) {
	f, ok := s.(formatted)
	if !ok {
		return codecNone, errors.New("webrtc: session does not report its audio format")
	}
	fm := f.Format()
	var c codec
	switch fm.Encoding {
	case media.MuLaw:
		c = codecPCMU
	case media.ALaw:
		c = codecPCMA
	default:
		return codecNone, fmt.Errorf("%w: encoding: the session was opened for %s; WebRTC carries wav/ulaw (PCMU) or wav/alaw (PCMA)", ErrFormat, fm.Encoding)
	}
	if fm.SampleRate != 8000 {
		return codecNone, fmt.Errorf("%w: sample_rate: the session was opened for %d Hz; G.711 over WebRTC is 8000", ErrFormat, fm.SampleRate)
	}
	if fm.Channels != 1 {
		return codecNone, fmt.Errorf("%w: channels: the session was opened for %d channels; WebRTC carries 1", ErrFormat, fm.Channels)
	}
	return c, nil
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
