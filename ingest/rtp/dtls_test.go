package rtp

import (
	"bytes"
	"context"
	"crypto/tls"
	"net"
	"testing"
	"time"

	"github.com/pion/dtls/v3"
	"github.com/pion/dtls/v3/pkg/crypto/selfsign"
	"github.com/pion/srtp/v3"

	"github.com/earshot-dev/earshot/ingest/codec"
)

// dtlsPeer is a phone doing DTLS-SRTP from conn to the receiver's port
// with cert: it returns the SRTP context its keys protect with.
func dtlsPeer(t *testing.T, conn *net.UDPConn, to *net.UDPAddr, cert tls.Certificate) (*srtp.Context, error) {
	t.Helper()
	c, err := dtls.ClientWithOptions(conn, to, dtls.WithCertificates(cert),
		dtls.WithSRTPProtectionProfiles(dtls.SRTP_AES128_CM_HMAC_SHA1_80), dtls.WithInsecureSkipVerify(true))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := c.HandshakeContext(ctx); err != nil {
		return nil, err
	}
	state, _ := c.ConnectionState()
	cfg := srtp.Config{Profile: srtp.ProtectionProfileAes128CmHmacSha1_80}
	if err := cfg.ExtractSessionKeysFromDTLS(&state, true); err != nil {
		t.Fatal(err)
	}
	return srtp.CreateContext(cfg.Keys.LocalMasterKey, cfg.Keys.LocalMasterSalt, cfg.Profile)
}

// TestReceiverDTLSSRTP: a stream set up for DTLS-SRTP takes no media
// until a peer whose certificate matches the SDP's fingerprint has done
// the handshake on its RTP port; the audio it then sends as SRTP under the
// agreed keys comes out as sent. A peer with another certificate fails
// the handshake and none of its media is taken.
func TestReceiverDTLSSRTP(t *testing.T) {
	door, err := selfsign.GenerateSelfSigned()
	if err != nil {
		t.Fatal(err)
	}
	phone, _ := selfsign.GenerateSelfSigned()
	stranger, _ := selfsign.GenerateSelfSigned()
	fp, err := CertificateFingerprint(phone)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		cert tls.Certificate
		ok   bool
	}{{"the fingerprinted phone", phone, true}, {"another certificate", stranger, false}} {
		t.Run(c.name, func(t *testing.T) {
			pair := listen(t, 1)[0]
			r, err := NewReceiver(ReceiverConfig{Codec: codec.PCMU, Timeout: 20 * time.Second}, []Stream{{Pair: pair, Codecs: map[uint8]codec.Codec{0: codec.PCMU},
				Mux: true, DTLS: &DTLS{Certificate: door, Fingerprint: fp, Timeout: 2 * time.Second}}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			g := start(t, r)
			conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			to := pair.RTP.LocalAddr().(*net.UDPAddr)
			// Media before the handshake is not taken.
			early := packets(t, ramp(160*5), 0, 9)
			for _, p := range early {
				conn.WriteTo(p, to)
			}
			sender, herr := dtlsPeer(t, conn, to, c.cert)
			if c.ok != (herr == nil) {
				t.Fatalf("handshake: %v, want ok=%v", herr, c.ok)
			}
			audio := ramp(160 * 50)
			var got []byte
			if sender != nil {
				paced(2*time.Millisecond, 50, func(i int) {
					conn.WriteTo(protect(t, sender, 99, uint16(i+100), audio[i*160:(i+1)*160]), to)
				})
				got = g.until(has(len(audio)))
			} else {
				g.hangUp()
				got = g.s.bytes()
			}
			if c.ok && !bytes.Equal(got, audio) {
				t.Fatalf("got %d bytes, want the %d sent after the handshake; stats %+v", len(got), len(audio), r.Stats())
			}
			if !c.ok && len(bytes.Trim(got, "\xff")) > 0 {
				t.Fatalf("%d bytes of audio taken without a handshake", len(bytes.Trim(got, "\xff")))
			}
		})
	}
}

// TestParseFingerprint: the a=fingerprint values a phone sends are read,
// and malformed ones refused.
func TestParseFingerprint(t *testing.T) {
	ok := "sha-256 0E:B5:4E:F0:0F:48:DF:0F:57:1B:0A:0A:8E:8F:60:8F:32:4A:21:CA:13:EB:87:ED:F8:AD:B6:C1:ED:FA:0D:37"
	if f, err := ParseFingerprint(ok); err != nil || f.Hash != "sha-256" {
		t.Errorf("%q: %+v %v", ok, f, err)
	}
	if _, err := ParseFingerprint("SHA-256 0e:b5:4e:f0:0f:48:df:0f:57:1b:0a:0a:8e:8f:60:8f:32:4a:21:ca:13:eb:87:ed:f8:ad:b6:c1:ed:fa:0d:37"); err != nil {
		t.Errorf("upper-case hash, lower-case digest: %v", err)
	}
	for _, bad := range []string{"", "sha-256", "md5 0E:B5", "sha-256 0E:B5", "sha-256 " + string(bytes.Repeat([]byte("0E:"), 300)),
		"sha-256 0E-B5-4E-F0-0F-48-DF-0F-57-1B-0A-0A-8E-8F-60-8F-32-4A-21-CA-13-EB-87-ED-F8-AD-B6-C1-ED-FA-0D-37",
		"sha-256 ZZ:B5:4E:F0:0F:48:DF:0F:57:1B:0A:0A:8E:8F:60:8F:32:4A:21:CA:13:EB:87:ED:F8:AD:B6:C1:ED:FA:0D:37"} {
		if _, err := ParseFingerprint(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// FuzzParseFingerprint: any a=fingerprint value is read or refused
// without panic, and what is read is a known hash with a digest of its
// size.
func FuzzParseFingerprint(f *testing.F) {
	f.Add("sha-256 0E:B5:4E:F0:0F:48:DF:0F:57:1B:0A:0A:8E:8F:60:8F:32:4A:21:CA:13:EB:87:ED:F8:AD:B6:C1:ED:FA:0D:37")
	f.Add("sha-1 00:11")
	f.Add("SHA-512")
	f.Fuzz(func(t *testing.T, v string) {
		fp, err := ParseFingerprint(v)
		if err != nil {
			return
		}
		if fp.Hash == "" || len(fp.Digest)%3 != 2 {
			t.Fatalf("%q read as %+v", v, fp)
		}
	})
}

// TestReceiverDTLSClient: to a passive offerer the door opens the
// handshake itself, to the stream's Remote, and takes the SRTP the peer
// then sends.
func TestReceiverDTLSClient(t *testing.T) {
	door, _ := selfsign.GenerateSelfSigned()
	phone, _ := selfsign.GenerateSelfSigned()
	fp, _ := CertificateFingerprint(phone)
	pair := listen(t, 1)[0]
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	remote := conn.LocalAddr().(*net.UDPAddr).AddrPort()
	r, err := NewReceiver(ReceiverConfig{Codec: codec.PCMU, Timeout: 20 * time.Second}, []Stream{{Pair: pair, Codecs: map[uint8]codec.Codec{0: codec.PCMU},
		Mux: true, Remote: remote, DTLS: &DTLS{Certificate: door, Fingerprint: fp, Client: true, Timeout: 3 * time.Second}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := start(t, r)
	to := pair.RTP.LocalAddr().(*net.UDPAddr)
	srv, err := dtls.ServerWithOptions(conn, to, dtls.WithCertificates(phone), dtls.WithClientAuth(dtls.RequireAnyClientCert),
		dtls.WithSRTPProtectionProfiles(dtls.SRTP_AES128_CM_HMAC_SHA1_80), dtls.WithInsecureSkipVerify(true))
	if err != nil {
		t.Fatal(err)
	}
	hctx, hcancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer hcancel()
	if err := srv.HandshakeContext(hctx); err != nil {
		t.Fatalf("the phone's side of the handshake: %v", err)
	}
	state, _ := srv.ConnectionState()
	cfg := srtp.Config{Profile: srtp.ProtectionProfileAes128CmHmacSha1_80}
	if err := cfg.ExtractSessionKeysFromDTLS(&state, false); err != nil {
		t.Fatal(err)
	}
	sender, err := srtp.CreateContext(cfg.Keys.LocalMasterKey, cfg.Keys.LocalMasterSalt, cfg.Profile)
	if err != nil {
		t.Fatal(err)
	}
	audio := ramp(160 * 50)
	paced(2*time.Millisecond, 50, func(i int) {
		conn.WriteTo(protect(t, sender, 77, uint16(i+1), audio[i*160:(i+1)*160]), to)
	})
	if got := g.until(has(len(audio))); !bytes.Equal(got, audio) {
		t.Fatalf("got %d bytes, want the %d sent; stats %+v", len(got), len(audio), r.Stats())
	}
}
