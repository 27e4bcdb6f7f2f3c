package sip

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/pion/sdp/v3"

	"github.com/earshot-dev/earshot/ingest/rtp"
)

// key30 is a 30-byte AES_CM_128 key and salt, base64 (as baresip sends).
var key30 = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xA5}, 30))

func TestParseCrypto(t *testing.T) {
	k28 := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 28))
	k46 := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{2}, 46))
	good := []struct {
		line   string
		suite  rtp.Suite
		mki    []byte
		window uint
	}{
		{"1 AES_CM_128_HMAC_SHA1_80 inline:" + key30, rtp.AESCM128HMACSHA180, nil, 0},
		{"2 AES_CM_128_HMAC_SHA1_32 inline:" + key30 + "|2^31", rtp.AESCM128HMACSHA132, nil, 0},
		{"3 AES_CM_128_HMAC_SHA1_80 inline:" + key30 + "|2^20|1:4 KDR=0 WSH=256", rtp.AESCM128HMACSHA180, []byte{0, 0, 0, 1}, 256},
		{"4 AES_CM_128_HMAC_SHA1_80 inline:" + key30 + "|258:2", rtp.AESCM128HMACSHA180, []byte{1, 2}, 0},
		{"5 AEAD_AES_128_GCM inline:" + k28, rtp.AEADAES128GCM, nil, 0},
		{"6 AEAD_AES_128_GCM inline:" + strings.TrimRight(k28, "="), rtp.AEADAES128GCM, nil, 0},
		{"7 AES_256_CM_HMAC_SHA1_80 inline:" + k46 + "|1048576", rtp.AES256CMHMACSHA180, nil, 0},
	}
	for _, g := range good {
		c, err := parseCrypto(g.line)
		if err != nil {
			t.Errorf("%q: %v", g.line, err)
			continue
		}
		if c.key.Suite != g.suite || !bytes.Equal(c.key.MKI, g.mki) || c.window != g.window || c.key.Check() != nil {
			t.Errorf("%q: suite %s mki %x window %d", g.line, c.key.Suite, c.key.MKI, c.window)
		}
	}
	bad := map[string]string{
		"unknown suite":       "1 F8_128_HMAC_SHA1_80 inline:" + key30,
		"short key":           "1 AES_CM_128_HMAC_SHA1_80 inline:" + k28,
		"long key":            "1 AES_CM_128_HMAC_SHA1_80 inline:" + k46,
		"two keys":            "1 AES_CM_128_HMAC_SHA1_80 inline:" + key30 + "|2^20|1:4;inline:" + key30 + "|2^20|2:4",
		"mki too long":        "1 AES_CM_128_HMAC_SHA1_80 inline:" + key30 + "|1:5",
		"mki value too big":   "1 AES_CM_128_HMAC_SHA1_80 inline:" + key30 + "|256:1",
		"mki before lifetime": "1 AES_CM_128_HMAC_SHA1_80 inline:" + key30 + "|1:1|2^20",
		"lifetime past 2^48":  "1 AES_CM_128_HMAC_SHA1_80 inline:" + key30 + "|2^64",
		"unencrypted":         "1 AES_CM_128_HMAC_SHA1_80 inline:" + key30 + " UNENCRYPTED_SRTP",
		"kdr":                 "1 AES_CM_128_HMAC_SHA1_80 inline:" + key30 + " KDR=24",
		"small wsh":           "1 AES_CM_128_HMAC_SHA1_80 inline:" + key30 + " WSH=8",
		"unknown param":       "1 AES_CM_128_HMAC_SHA1_80 inline:" + key30 + " FEC_ORDER=FEC_SRTP",
		"not base64":          "1 AES_CM_128_HMAC_SHA1_80 inline:" + strings.Repeat("!", 40),
		"uri method":          "1 AES_CM_128_HMAC_SHA1_80 uri:https://example.com/k",
		"no key":              "1 AES_CM_128_HMAC_SHA1_80",
		"tag not digits":      "x AES_CM_128_HMAC_SHA1_80 inline:" + key30,
		"oversized":           "1 AES_CM_128_HMAC_SHA1_80 inline:" + key30 + strings.Repeat(" WSH=64", 100),
	}
	for name, line := range bad {
		_, err := parseCrypto(line)
		if !errors.Is(err, errCrypto) {
			t.Errorf("%s: err %v", name, err)
			continue
		}
		if strings.Contains(err.Error(), key30[:16]) {
			t.Errorf("%s: the key is in the error %q", name, err)
		}
	}
}

func savpOffer(proto, crypto string) string {
	s := "v=0\r\no=- 1 1 IN IP4 h\r\ns=-\r\nc=IN IP4 192.0.2.1\r\nt=0 0\r\nm=audio 5000 " + proto + " 0 101\r\na=rtpmap:101 telephone-event/8000\r\n"
	if crypto != "" {
		s += "a=crypto:" + crypto + "\r\n"
	}
	return s
}

// TestMediaPolicy: each route policy and transport against plain,
// best-effort and RTP/SAVP offers.
func TestMediaPolicy(t *testing.T) {
	good := "1 AES_CM_128_HMAC_SHA1_80 inline:" + key30
	unusable := "1 AES_CM_128_HMAC_SHA1_80 inline:" + key30[:20]
	tls := func(mode string) mediaPolicy { return mediaPolicy{mode: mode, keys: true, transport: "TLS"} }
	udp := func(mode string) mediaPolicy { return mediaPolicy{mode: mode, transport: "UDP"} }
	cases := []struct {
		name   string
		offer  string
		policy mediaPolicy
		srtp   bool   // answered with SRTP
		refuse string // a word of the refusal, "" if taken
	}{
		{"plain on optional", savpOffer("RTP/AVP", ""), tls(srtpOptional), false, ""},
		{"savp on optional over tls", savpOffer("RTP/SAVP", good), tls(srtpOptional), true, ""},
		{"savpf on mandatory over tls", savpOffer("RTP/SAVPF", good), tls(srtpMandatory), true, ""},
		{"best effort on optional", savpOffer("RTP/AVP", good), tls(srtpOptional), true, ""},
		{"best effort on mandatory", savpOffer("RTP/AVP", good), tls(srtpMandatory), true, ""},
		{"plain on mandatory", savpOffer("RTP/AVP", ""), tls(srtpMandatory), false, "mandatory"},
		{"savp on off", savpOffer("RTP/SAVP", good), tls(srtpOff), false, "srtp: off"},
		{"best effort on off", savpOffer("RTP/AVP", good), tls(srtpOff), false, ""},
		{"savp over udp", savpOffer("RTP/SAVP", good), udp(srtpOptional), false, "not TLS"},
		{"best effort over udp on optional", savpOffer("RTP/AVP", good), udp(srtpOptional), false, ""},
		{"best effort over udp on mandatory", savpOffer("RTP/AVP", good), udp(srtpMandatory), false, "not TLS"},
		{"savp over udp in a lab", savpOffer("RTP/SAVP", good), mediaPolicy{mode: srtpMandatory, keys: true, transport: "UDP"}, true, ""},
		{"savp without crypto", savpOffer("RTP/SAVP", ""), tls(srtpOptional), false, "no usable"},
		{"savp with an unusable key", savpOffer("RTP/SAVP", unusable), tls(srtpOptional), false, "byte key"},
		{"best effort unusable on mandatory", savpOffer("RTP/AVP", unusable), tls(srtpMandatory), false, "no usable"},
		{"best effort unusable on optional", savpOffer("RTP/AVP", unusable), tls(srtpOptional), false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := securedOffer(t, c.offer, c.policy, c.refuse)
			if o == nil {
				return
			}
			if got := o.streams[0].crypto != nil; got != c.srtp {
				t.Fatalf("srtp %v, want %v", got, c.srtp)
			}
			var keys []*rtp.SRTPKey
			if c.srtp {
				k, _ := rtp.NewSRTPKey(o.streams[0].crypto.key.Suite)
				keys = []*rtp.SRTPKey{&k}
			}
			ans, err := o.answer(netip.MustParseAddr("192.0.2.9"), []int{20000}, keys, nil, 1, 1)
			if err != nil {
				t.Fatal(err)
			}
			checkAnswerCrypto(t, ans, c.srtp, strings.Join(o.streams[0].protos, "/"))
		})
	}
}

// checkAnswerCrypto checks the answer's one audio line: its proto echoes
// the offer's, and it carries an a=crypto of tag 1 with a fresh key of the
// suite exactly when srtp.
func checkAnswerCrypto(t *testing.T, ans []byte, srtp bool, proto string) {
	t.Helper()
	var sd sdp.SessionDescription
	if err := sd.Unmarshal(ans); err != nil {
		t.Fatal(err)
	}
	m := sd.MediaDescriptions[0]
	if p := strings.Join(m.MediaName.Protos, "/"); p != proto {
		t.Errorf("answer proto %s, offer %s", p, proto)
	}
	v, ok := m.Attribute("crypto")
	if ok != srtp {
		t.Fatalf("a=crypto %q in the answer, want one: %v", v, srtp)
	}
	if !srtp {
		return
	}
	c, err := parseCrypto(v)
	if err != nil || c.tag != 1 || c.key.Suite != rtp.AESCM128HMACSHA180 {
		t.Fatalf("answer's a=crypto %v: %+v", err, c)
	}
	if base64.StdEncoding.EncodeToString(c.key.Key) == key30 {
		t.Error("the answer echoes the offer's key")
	}
}

func TestReofferRekeys(t *testing.T) {
	good := "1 AES_CM_128_HMAC_SHA1_80 inline:" + key30
	other := "1 AES_CM_128_HMAC_SHA1_80 inline:" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{9}, 30))
	lab := mediaPolicy{mode: srtpOptional, keys: true, transport: "UDP"}
	parse := func(s string) *offer {
		o, err := parseOffer([]byte(s), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := o.secure(lab); err != nil {
			t.Fatal(err)
		}
		return o
	}
	call := parse(savpOffer("RTP/SAVP", good))
	if got, err := parse(savpOffer("RTP/SAVP", strings.Replace(good, "1 ", "2 ", 1))).rekeyed(call); err != nil || len(got) != 0 {
		t.Errorf("same key, another tag: %v %v", got, err)
	}
	if got, err := parse(savpOffer("RTP/SAVP", other)).rekeyed(call); err != nil || len(got) != 1 || got[0] != 0 {
		t.Errorf("a new key: %v %v, want stream 0 rekeyed", got, err)
	}
	if _, err := parse(savpOffer("RTP/AVP", "")).rekeyed(call); !errors.Is(err, ErrMediaSecurity) {
		t.Errorf("plain re-offer: %v", err)
	}
}

// FuzzParseCrypto: any a=crypto value either parses to a key that fits its
// suite or is refused with errCrypto naming no key bytes; never a panic.
func FuzzParseCrypto(f *testing.F) {
	f.Add("1 AES_CM_128_HMAC_SHA1_80 inline:" + key30 + "|2^20|1:4 KDR=0 WSH=128")
	f.Add("1 AEAD_AES_256_GCM inline:" + key30 + key30)
	f.Add("99 AES_256_CM_HMAC_SHA1_32 inline:" + key30 + ";inline:" + key30)
	f.Add("")
	f.Fuzz(func(t *testing.T, v string) {
		c, err := parseCrypto(v)
		if err != nil {
			if !errors.Is(err, errCrypto) {
				t.Fatalf("%v is not errCrypto", err)
			}
			_, info, _ := strings.Cut(v, "inline:")
			k, _, _ := strings.Cut(info, "|")
			if f := strings.Fields(k); len(f) > 0 && len(f[0]) >= 16 && strings.Contains(err.Error(), f[0]) {
				t.Fatalf("error %q quotes the key", err)
			}
			return
		}
		if err := c.key.Check(); err != nil {
			t.Fatalf("%q parsed to an unusable key: %v", v, err)
		}
		for _, s := range []string{fmt.Sprint(c), fmt.Sprintf("%+v", &c), fmt.Sprintf("%#v", c)} {
			if !strings.Contains(s, "[redacted]") || strings.Contains(s, fmt.Sprint(c.key.Key)) {
				t.Fatalf("%q prints its key", s)
			}
		}
	})
}

// securedOffer parses body and applies policy (offer.secure): when refuse
// is set, the offer must be refused 488 with ErrMediaSecurity naming it,
// and securedOffer returns nil; otherwise it must be taken.
func securedOffer(t *testing.T, body string, policy mediaPolicy, refuse string) *offer {
	t.Helper()
	o, err := parseOffer([]byte(body), nil)
	if err != nil {
		t.Fatal(err)
	}
	err = o.secure(policy)
	if refuse != "" {
		if !errors.Is(err, ErrMediaSecurity) || !strings.Contains(err.Error(), refuse) {
			t.Fatalf("err %v, want ErrMediaSecurity naming %q", err, refuse)
		}
		if code, _ := reply(err); code != 488 {
			t.Fatalf("status %d", code)
		}
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return o
}
