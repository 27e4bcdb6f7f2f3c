package rtp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/pion/rtcp"
	pionrtp "github.com/pion/rtp"
	"github.com/pion/srtp/v3"
)

// srtpSender protects packets as a peer holding k would.
func srtpSender(t testing.TB, k SRTPKey) *srtp.Context {
	t.Helper()
	kl, _ := k.Suite.profile().KeyLen()
	var opts []srtp.ContextOption
	if len(k.MKI) > 0 {
		opts = append(opts, srtp.MasterKeyIndicator(k.MKI))
	}
	c, err := srtp.CreateContext(k.Key[:kl], k.Key[kl:], k.Suite.profile(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func protect(t testing.TB, c *srtp.Context, ssrc uint32, seq uint16, payload []byte) []byte {
	t.Helper()
	p := pionrtp.Packet{Header: pionrtp.Header{Version: 2, PayloadType: 0, SequenceNumber: seq, Timestamp: uint32(seq) * 160, SSRC: ssrc}, Payload: payload}
	b, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.EncryptRTP(nil, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestUnprotectEverySuite(t *testing.T) {
	for _, e := range suites {
		for _, mki := range [][]byte{nil, {0, 0, 0, 7}} {
			t.Run(fmt.Sprintf("%s/mki%d", e.name, len(mki)), func(t *testing.T) {
				k, err := NewSRTPKey(e.suite)
				if err != nil {
					t.Fatal(err)
				}
				k.MKI = mki
				u, err := newUnprotector(&SRTP{Remote: k})
				if err != nil {
					t.Fatal(err)
				}
				c := srtpSender(t, k)
				payload := bytes.Repeat([]byte{0x55}, 160)
				// Across the sequence number's wrap: the rollover counter.
				for seq := uint16(65530); seq != 10; seq++ {
					b := protect(t, c, 1234, seq, payload)
					if bytes.Contains(b, payload[:16]) {
						t.Fatal("payload in clear")
					}
					out, err := u.unprotect(b, false)
					if err != nil {
						t.Fatalf("seq %d: %v", seq, err)
					}
					var p pionrtp.Packet
					if err := p.Unmarshal(out); err != nil || !bytes.Equal(p.Payload, payload) || p.SequenceNumber != seq {
						t.Fatalf("seq %d: got %d %x, %v", seq, p.SequenceNumber, p.Payload[:4], err)
					}
				}
				// SRTCP of the same source: a sender report.
				sr := rtcp.SenderReport{SSRC: 1234, NTPTime: 1 << 40, RTPTime: 99, PacketCount: 16, OctetCount: 2560}
				plain, _ := sr.Marshal()
				prot, err := c.EncryptRTCP(nil, plain, nil)
				if err != nil {
					t.Fatal(err)
				}
				again := append([]byte(nil), prot...)
				out, err := u.unprotect(prot, true)
				if err != nil || !bytes.Equal(out, plain) {
					t.Fatalf("srtcp: %x, %v", out, err)
				}
				if _, err := u.unprotect(again, true); !errors.Is(err, ErrSRTPReplay) {
					t.Fatalf("srtcp replayed: %v", err)
				}
			})
		}
	}
}

func TestUnprotectRefuses(t *testing.T) {
	k, _ := NewSRTPKey(AESCM128HMACSHA180)
	u, err := newUnprotector(&SRTP{Remote: k})
	if err != nil {
		t.Fatal(err)
	}
	c := srtpSender(t, k)
	payload := make([]byte, 160)
	first := protect(t, c, 99, 1, payload)
	replay := append([]byte(nil), first...)
	if _, err := u.unprotect(first, false); err != nil {
		t.Fatal(err)
	}
	if _, err := u.unprotect(replay, false); !errors.Is(err, ErrSRTPReplay) {
		t.Errorf("replayed: %v, want ErrSRTPReplay", err)
	}
	tampered := protect(t, c, 99, 2, payload)
	tampered[20] ^= 1
	if _, err := u.unprotect(tampered, false); !errors.Is(err, ErrSRTPAuth) {
		t.Errorf("tampered: %v, want ErrSRTPAuth", err)
	}
	other, _ := NewSRTPKey(AESCM128HMACSHA180)
	if _, err := u.unprotect(protect(t, srtpSender(t, other), 99, 3, payload), false); !errors.Is(err, ErrSRTPAuth) {
		t.Errorf("wrong key: %v, want ErrSRTPAuth", err)
	}
	plain, _ := (&pionrtp.Packet{Header: pionrtp.Header{Version: 2, SequenceNumber: 4, SSRC: 99}, Payload: payload}).Marshal()
	if _, err := u.unprotect(plain, false); !errors.Is(err, ErrSRTPAuth) {
		t.Errorf("plain RTP: %v, want ErrSRTPAuth", err)
	}
	if _, err := u.unprotect([]byte{0x80, 0}, false); !errors.Is(err, ErrSRTPAuth) {
		t.Errorf("2 bytes: %v, want ErrSRTPAuth", err)
	}
	// The tampered packet's sequence number still decrypts when it comes
	// intact: a failed tag moves no window.
	if _, err := u.unprotect(protect(t, srtpSender(t, k), 99, 2, payload), false); err != nil {
		t.Errorf("seq 2 after a forged seq 2: %v", err)
	}
}

// A flood of forged SSRCs and of real ones holds a bounded state.
func TestUnprotectBoundsSources(t *testing.T) {
	k, _ := NewSRTPKey(AESCM128HMACSHA132)
	u, _ := newUnprotector(&SRTP{Remote: k})
	c := srtpSender(t, k)
	forged := protect(t, c, 0, 1, make([]byte, 160))
	for i := range 10 * probeMisses {
		b := append([]byte(nil), forged...)
		binary.BigEndian.PutUint32(b[8:], uint32(i+1))
		if _, err := u.unprotect(b, false); err == nil {
			t.Fatal("forged SSRC accepted")
		}
		if u.misses > probeMisses {
			t.Fatalf("probe kept %d misses", u.misses)
		}
	}
	for ssrc := range uint32(3 * maxSRTPSources) {
		if _, err := u.unprotect(protect(t, c, ssrc+1000, 1, make([]byte, 160)), false); err != nil {
			t.Fatal(err)
		}
	}
	if len(u.sources) != maxSRTPSources {
		t.Errorf("%d sources held, want %d", len(u.sources), maxSRTPSources)
	}
}

func TestSRTPKeyNeverPrinted(t *testing.T) {
	k, _ := NewSRTPKey(AESCM128HMACSHA180)
	k.Key = bytes.Repeat([]byte("K"), len(k.Key))
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("x", "key", k)
	for _, s := range []string{fmt.Sprint(k), fmt.Sprintf("%+v %#v %x %s", k, k, k, k), fmt.Sprint(&SRTP{Remote: k}), logged.String()} {
		if strings.Contains(s, "KKKK") || strings.Contains(s, "4b4b4b4b") || strings.Contains(s, "S0tL") {
			t.Errorf("key in %q", s)
		}
	}
}

// FuzzSRTPUnprotect feeds arbitrary datagrams, RTP and RTCP, to a stream's
// unprotect path between real packets: no panic, nothing forged accepted,
// the real packets still decrypt.
func FuzzSRTPUnprotect(f *testing.F) {
	k := SRTPKey{Suite: AESCM128HMACSHA180, Key: bytes.Repeat([]byte{7}, 30)}
	c := srtpSender(f, k)
	f.Add(protect(f, c, 5, 1, make([]byte, 160)), false)
	f.Add([]byte{0x80, 0xc8, 0, 6, 0, 0, 0, 5}, true)
	f.Add([]byte{}, false)
	f.Fuzz(func(t *testing.T, b []byte, rtcp bool) {
		u, err := newUnprotector(&SRTP{Remote: k})
		if err != nil {
			t.Fatal(err)
		}
		real := srtpSender(t, k)
		if _, err := u.unprotect(protect(t, real, 5, 100, make([]byte, 160)), false); err != nil {
			t.Fatal(err)
		}
		in := append([]byte(nil), b...)
		if out, err := u.unprotect(in, rtcp); err == nil && len(out) > len(b) {
			t.Fatalf("%d bytes out of %d", len(out), len(b))
		}
		if _, err := u.unprotect(protect(t, real, 5, 101, make([]byte, 160)), false); err != nil {
			t.Fatalf("a real packet after %x: %v", b, err)
		}
	})
}

// TestRekeyKeepsOldKeyInFlight: after a rekey the old key still
// decrypts packets on their way until the first packet under the new key
// authenticates; from then on only the new key does.
func TestRekeyKeepsOldKeyInFlight(t *testing.T) {
	for _, suite := range []Suite{AESCM128HMACSHA180, AEADAES128GCM} {
		t.Run(suite.String(), func(t *testing.T) {
			oldKey, _ := NewSRTPKey(suite)
			newKey, _ := NewSRTPKey(suite)
			u, err := newUnprotector(&SRTP{Remote: oldKey})
			if err != nil {
				t.Fatal(err)
			}
			oldSender, newSender := srtpSender(t, oldKey), srtpSender(t, newKey)
			payload := bytes.Repeat([]byte{0x3c}, 160)
			if _, err := u.unprotect(protect(t, oldSender, 7, 1, payload), false); err != nil {
				t.Fatal(err)
			}
			r := &Receiver{streams: []*streamState{{srtp: u}}}
			if err := r.Rekey(0, &SRTP{Remote: newKey}); err != nil {
				t.Fatal(err)
			}
			r.takeUpdate()
			u = r.streams[0].srtp
			late := protect(t, oldSender, 7, 2, payload)
			out, err := u.unprotect(late, false)
			var p pionrtp.Packet
			if err != nil || p.Unmarshal(out) != nil || !bytes.Equal(p.Payload, payload) {
				t.Fatalf("an old-key packet in flight: %v", err)
			}
			if _, err := u.unprotect(protect(t, newSender, 7, 1, payload), false); err != nil {
				t.Fatalf("the first new-key packet: %v", err)
			}
			if _, err := u.unprotect(protect(t, oldSender, 7, 3, payload), false); !errors.Is(err, ErrSRTPAuth) {
				t.Errorf("an old-key packet after the switch: %v, want ErrSRTPAuth", err)
			}
		})
	}
}
