package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/emiago/sipgo"
	sipmsg "github.com/emiago/sipgo/sip"
	pionrtp "github.com/pion/rtp"
	"github.com/pion/sdp/v3"
	"github.com/pion/srtp/v3"

	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// sipSRTPLabConfig is a door whose route takes SDES keys over UDP and TCP
// (the lab setting: these tests' client speaks no TLS) and requires SRTP.
const sipSRTPLabConfig = `
sip:
  listen: 127.0.0.1:0
  rtp_ports: 31840-31879
  max_calls: 8
  allow: [127.0.0.0/8]
  routes:
    - user: transcribe
      account: acme
      srtp: mandatory
      allow_sdes_without_tls: true
      live:
        language_config: {languages: [en]}
`

// srtpSuite is one suite a test sender offers: its SDES name, pion's
// profile and its key and salt length.
type srtpSuite struct {
	name    string
	profile srtp.ProtectionProfile
	keyLen  int
}

var (
	suite32  = srtpSuite{"AES_CM_128_HMAC_SHA1_32", srtp.ProtectionProfileAes128CmHmacSha1_32, 30}
	suiteGCM = srtpSuite{"AEAD_AES_128_GCM", srtp.ProtectionProfileAeadAes128Gcm, 28}
)

// srtpSender is a caller's side of one SRTP stream: its key, as offered.
type srtpSender struct {
	suite srtpSuite
	key   []byte
	ctx   *srtp.Context
}

func newSRTPSender(t *testing.T, s srtpSuite, fill byte) *srtpSender {
	t.Helper()
	key := bytes.Repeat([]byte{fill}, s.keyLen)
	for i := range key {
		key[i] ^= byte(i * 7)
	}
	c, err := srtp.CreateContext(key[:16], key[16:], s.profile)
	if err != nil {
		t.Fatal(err)
	}
	return &srtpSender{suite: s, key: key, ctx: c}
}

func (s *srtpSender) crypto(tag int) string {
	return fmt.Sprintf("a=crypto:%d %s inline:%s\r\n", tag, s.suite.name, base64.StdEncoding.EncodeToString(s.key))
}

// savpOffer offers one RTP/SAVP PCMU stream per port with the given
// a=crypto lines, labelled 1, 2... for SIPREC.
func savpOffer(ports []int, crypto []string) []byte {
	var b strings.Builder
	b.WriteString("v=0\r\no=phone 1 1 IN IP4 127.0.0.1\r\ns=call\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n")
	for i, port := range ports {
		fmt.Fprintf(&b, "m=audio %d RTP/SAVP 0\r\na=rtpmap:0 PCMU/8000\r\na=ptime:20\r\na=sendonly\r\na=label:%d\r\n%s", port, i+1, crypto[i])
	}
	return []byte(b.String())
}

// hostile says what sendSRTP slips between the real packets of a stream:
// every n-th packet, the next packet with a flipped payload bit
// (tampered) and in clear (plain), both before the next packet itself, an
// earlier packet again (replayed), and a packet of another SSRC with a
// garbage tag (forged).
type hostile struct{ n int }

// sendSRTP streams audio as SRTP PCMU packets, speedup times real time,
// audio[0] being sample from of the stream (its sequence numbers and
// timestamps follow from it); with h, each h.n-th tick also carries the
// four hostile packets. It returns how many of each kind it sent
// (tampered, replayed, plain, forged).
func sendSRTP(t *testing.T, conn *net.UDPConn, dst *net.UDPAddr, s *srtpSender, audio []byte, from, speedup int, ssrc uint32, h hostile) [4]int {
	t.Helper()
	var sent [4]int
	var clear, prot [][]byte
	for i, seq := 0, uint16(65000+from/160); i < len(audio); i, seq = i+160, seq+1 { // from 65000: across the wrap
		p := pionrtp.Packet{Header: pionrtp.Header{Version: 2, PayloadType: 0, SequenceNumber: seq, Timestamp: uint32(7000 + from + i), SSRC: ssrc}, Payload: audio[i:min(i+160, len(audio))]}
		b, err := p.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		e, err := s.ctx.EncryptRTP(nil, b, nil)
		if err != nil {
			t.Fatal(err)
		}
		clear, prot = append(clear, b), append(prot, e)
	}
	tick := time.NewTicker(20 * time.Millisecond / time.Duration(speedup))
	defer tick.Stop()
	for i, e := range prot {
		<-tick.C
		conn.WriteToUDP(e, dst)
		if h.n == 0 || i%h.n != h.n-1 || i+1 >= len(prot) {
			continue
		}
		tampered := append([]byte(nil), prot[i+1]...)
		tampered[20] ^= 0x10
		conn.WriteToUDP(tampered, dst) // before the real one: it must not poison its index
		conn.WriteToUDP(prot[i-h.n/2], dst)
		conn.WriteToUDP(clear[i+1], dst) // the next packet in clear, before it comes protected
		forged := append([]byte(nil), e...)
		binary.BigEndian.PutUint32(forged[8:], uint32(i)*2654435761)
		conn.WriteToUDP(forged, dst)
		for k := range sent {
			sent[k]++
		}
	}
	return sent
}

// TestSIPRECSRTP records a SIPREC call whose two streams are SRTP, each
// with its own key and suite (AES_CM_128_HMAC_SHA1_32 and
// AEAD_AES_128_GCM), the first streamed across the sequence number's wrap
// with tampered, replayed, plain and forged packets between its real
// ones. Both channels are decrypted and transcribed, the labels and
// rs-metadata kept; every hostile packet is dropped and counted
// (srtp_auth_failed, srtp_replayed, the metrics) and the second stream
// drops none. Offers with unusable a=crypto lines each get 488 naming why.
func TestSIPRECSRTP(t *testing.T) {
	d, addr := startSIPDaemon(t, sipSRTPLabConfig)
	key := createKey(t, d.DataDir, "acme")
	p := newPhone(t, addr)
	p.tcp = true // the multipart INVITE is larger than a UDP datagram may be
	a, refA := g711(t, "pocketsphinx-goforward.wav", "mulaw")
	b, refB := g711(t, "ls-test-clean-1089-134691-0001.wav", "mulaw")
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	connA, portA := udpPair(t)
	connB, portB := udpPair(t)
	sa, sb := newSRTPSender(t, suite32, 0x31), newSRTPSender(t, suiteGCM, 0x47)
	body := siprecBody(savpOffer([]int{portA, portB}, []string{sa.crypto(1), sb.crypto(7)}))
	dlg, code := p.call(ctx, "transcribe", "multipart/mixed;boundary=b0undary", []byte(body), sipmsg.NewHeader("Require", "siprec"))
	if code != 200 {
		t.Fatalf("SIPREC INVITE answered %d", code)
	}
	addrs := checkSRTPAnswer(t, dlg.InviteResponse.Body(), map[int]srtpSuite{0: suite32, 1: suiteGCM}, []int{1, 7})
	done := make(chan struct{})
	go func() { defer close(done); sendSRTP(t, connB, addrs[1], sb, b, 0, 8, 0xB, hostile{}) }()
	sent := sendSRTP(t, connA, addrs[0], sa, a, 0, 8, 0xA, hostile{n: 10})
	<-done
	job := siprecJob(t, ctx, d, key, dlg, `"siprec_session_id":"ab30317f1a784dc48ff824d0d3715d86`,
		`"aor":"sip:alice@pbx.example","channel":0`, `"label":"2"`)
	for ch, ref := range []string{refA, refB} {
		text := channelText(job, ch)
		wer := recognizertest.WER(ref, text)
		t.Logf("channel %d WER %.3f: %s", ch, wer, text)
		if wer > werSIPAny || text == "" {
			t.Errorf("channel %d WER %.3f > %.3f", ch, wer, werSIPAny)
		}
	}
	// Tampered, plain and forged packets fail their tag; replays their
	// window. Nothing else of the streams does.
	authFailed, replayed := 3*sent[0], sent[1]
	ended := d.WaitLog(10*time.Second, `"msg":"sip call ended"`, dlg.InviteRequest.CallID().Value())
	// And no real packet was lost to them (a forged packet poisoning its
	// index would lose the real one).
	for ch, want := range []string{fmt.Sprintf("srtp_auth_failed=%d srtp_replayed=%d", authFailed, replayed), "srtp_auth_failed=0 srtp_replayed=0"} {
		m := regexp.MustCompile(fmt.Sprintf(`"channel_%d":"([^"]*)"`, ch)).FindStringSubmatch(ended)
		if m == nil || !strings.Contains(m[1], want) || !strings.Contains(m[1], " lost=0 ") {
			t.Errorf("channel %d: the call's end line lacks %q and lost=0: %s", ch, want, ended)
		}
	}
	if n := d.metric("earshot_srtp_auth_failed_packets_total"); n != float64(authFailed) {
		t.Errorf("earshot_srtp_auth_failed_packets_total %v, want %d", n, authFailed)
	}
	if n := d.metric("earshot_srtp_replayed_packets_total"); n != float64(replayed) {
		t.Errorf("earshot_srtp_replayed_packets_total %v, want %d", n, replayed)
	}
	d.WaitLog(time.Second, `"msg":"srtp packet dropped"`, `"channel":0`)
	if strings.Contains(strings.Join(d.linesWith("crypto"), "\n"), base64.StdEncoding.EncodeToString(sa.key)) {
		t.Error("the log holds the caller's key")
	}

	// Unusable a=crypto lines: each offer answered 488, its reason logged.
	good := sa.crypto(1)
	long := "a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 30)) + strings.Repeat(" WSH=64", 80) + "\r\n"
	bad := []struct{ name, crypto, reason string }{
		{"unknown suite", strings.Replace(good, suite32.name, "F8_128_HMAC_SHA1_80", 1), "unknown suite"},
		{"wrong key length", strings.Replace(good, suite32.name, "AES_256_CM_HMAC_SHA1_80", 1), "takes a 46-byte key and salt, not 30"},
		{"oversized line", long, "bytes, at most 512"},
		{"mki of 5 bytes", strings.Replace(good, "\r\n", "|2^20|1:5\r\n", 1), "MKI length"},
		{"two keys", strings.Replace(good, "\r\n", "|2^20|1:4;inline:"+base64.StdEncoding.EncodeToString(sa.key)+"|2^20|2:4\r\n", 1), "more than one key"},
		{"unencrypted", strings.Replace(good, "\r\n", " UNENCRYPTED_SRTP\r\n", 1), "UNENCRYPTED_SRTP is not taken"},
		{"none", "", "no usable a=crypto"},
	}
	p.tcp = false
	before := d.metric("earshot_sip_srtp_refused_total")
	for _, c := range bad {
		res := p.refusal(ctx, "transcribe", savpOffer([]int{portA}, []string{c.crypto}))
		if res.StatusCode != 488 {
			t.Errorf("%s: answered %d, want 488", c.name, res.StatusCode)
			continue
		}
		d.WaitLog(5*time.Second, `"msg":"sip call refused"`, `"status":488`, res.CallID().Value(), c.reason)
	}
	if n := d.metric("earshot_sip_srtp_refused_total") - before; n != float64(len(bad)) {
		t.Errorf("earshot_sip_srtp_refused_total rose by %v, want %d", n, len(bad))
	}
}

// checkSRTPAnswer checks that each stream of the answer is RTP/SAVP with
// an a=crypto of the offer's tag and suite and a key of its own, and
// returns the streams' RTP addresses.
func checkSRTPAnswer(t *testing.T, body []byte, suites map[int]srtpSuite, tags []int) []*net.UDPAddr {
	t.Helper()
	var sd sdp.SessionDescription
	if err := sd.Unmarshal(body); err != nil {
		t.Fatalf("answer SDP: %v\n%s", err, body)
	}
	var addrs []*net.UDPAddr
	for i, m := range sd.MediaDescriptions {
		addrs = append(addrs, &net.UDPAddr{IP: net.ParseIP(sd.ConnectionInformation.Address.Address), Port: m.MediaName.Port.Value})
		v, ok := m.Attribute("crypto")
		f := strings.Fields(v)
		if strings.Join(m.MediaName.Protos, "/") != "RTP/SAVP" || !ok || len(f) != 3 || f[0] != fmt.Sprint(tags[i]) || f[1] != suites[i].name {
			t.Fatalf("stream %d answered %v %q", i, m.MediaName.Protos, v)
		}
		k, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(f[2], "inline:"))
		if err != nil || len(k) != suites[i].keyLen {
			t.Fatalf("stream %d: answer key of %d bytes (%v)", i, len(k), err)
		}
	}
	return addrs
}

// TestSIPSRTPRekey: a call's caller changes its SRTP key halfway by
// re-INVITE (RFC 4568 section 7.1.4): answered 200 with an a=crypto, the
// second half, under the new key, is decrypted too and the whole clip
// transcribed, no packet failing; a re-INVITE that would turn SRTP off
// gets 488 and the call goes on.
func TestSIPSRTPRekey(t *testing.T) {
	d, addr := startSIPDaemon(t, telephoneModel(t)+sipSRTPLabConfig)
	key := createKey(t, d.DataDir, "acme")
	p := newPhone(t, addr)
	audio, ref := g711(t, codecClip, "mulaw")
	half := len(audio) / 2 / 160 * 160
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	conn, port := udpPair(t)
	first, second := newSRTPSender(t, suite32, 0x11), newSRTPSender(t, suite32, 0x22)
	dlg, code := p.call(ctx, "transcribe", "application/sdp", savpOffer([]int{port}, []string{first.crypto(1)}))
	if code != 200 {
		t.Fatalf("INVITE answered %d", code)
	}
	addrs := checkSRTPAnswer(t, dlg.InviteResponse.Body(), map[int]srtpSuite{0: suite32}, []int{1})
	sendSRTP(t, conn, addrs[0], first, audio[:half], 0, 4, 0x5, hostile{})
	res := reinvite(t, ctx, dlg, savpOffer([]int{port}, []string{second.crypto(2)}))
	if res.StatusCode != 200 {
		t.Fatalf("rekeying re-INVITE answered %d", res.StatusCode)
	}
	checkSRTPAnswer(t, res.Body(), map[int]srtpSuite{0: suite32}, []int{2})
	d.WaitLog(5*time.Second, `"msg":"sip re-invite"`, `"srtp_rekeyed":1`)
	sendSRTP(t, conn, addrs[0], second, audio[half:half+len(audio[half:])/2/160*160], half, 4, 0x5, hostile{})
	if res := reinvite(t, ctx, dlg, offerSDP([]int{port}, "0", "sendonly", true)); res.StatusCode != 488 {
		t.Fatalf("a re-INVITE turning SRTP off answered %d, want 488", res.StatusCode)
	}
	d.WaitLog(5*time.Second, `"msg":"sip re-invite refused"`, "the route has srtp: mandatory")
	rest := half + len(audio[half:])/2/160*160
	sendSRTP(t, conn, addrs[0], second, audio[rest:], rest, 4, 0x5, hostile{})
	if err := dlg.Bye(ctx); err != nil {
		t.Fatalf("bye: %v", err)
	}
	job := liveJobByCall(t, d, key, dlg.InviteRequest.CallID().Value(), 90*time.Second)
	if job["status"] != "done" {
		t.Fatalf("job %v", job["status"])
	}
	text := channelText(job, 0)
	wer := recognizertest.WER(ref, text)
	t.Logf("WER %.3f: %s", wer, text)
	if wer > werBaresipPCMU { // the clip's bound through the door in clear
		t.Errorf("WER %.3f > %.3f", wer, werBaresipPCMU)
	}
	ended := d.WaitLog(10*time.Second, `"msg":"sip call ended"`, dlg.InviteRequest.CallID().Value())
	if !strings.Contains(ended, "srtp_auth_failed=0 srtp_replayed=0") || !strings.Contains(ended, " lost=0 ") {
		t.Errorf("packets lost or refused across the rekey: %s", ended)
	}
}

// sipSRTPTLSRecConfig: SIP over TLS (certificate and key filled in) and a
// route requiring SRTP without the lab flag: the production setting.
const sipSRTPTLSRecConfig = `
sip:
  listen: 127.0.0.1:0
  tls_listen: 127.0.0.1:0
  tls_cert: %s
  tls_key: %s
  rtp_ports: 31920-31959
  max_calls: 8
  allow: [127.0.0.0/8]
  routes:
    - user: transcribe
      account: acme
      srtp: mandatory
      live:
        language_config: {languages: [en]}
`

// TestSIPRECSRTPOverTLS records a SIPREC call as an SBC sends it in
// production: the INVITE over SIP/TLS, both streams SRTP with keys of
// their own, on a route requiring SRTP without allow_sdes_without_tls.
// Both channels are decrypted and transcribed, the labels kept, the call
// answered over TLS and ended by the caller's BYE over the same
// connection.
func TestSIPRECSRTPOverTLS(t *testing.T) {
	d, _, tlsAddr, certFile := startSIPTLSDaemon(t, sipSRTPTLSRecConfig)
	key := createKey(t, d.DataDir, "acme")
	pem, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	ua, err := sipgo.NewUA(sipgo.WithUserAgent("e2e-sbc"), sipgo.WithUserAgenTLSConfig(&tls.Config{RootCAs: roots, ServerName: "127.0.0.1"}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ua.Close() })
	cli, err := sipgo.NewClient(ua, sipgo.WithClientHostname("127.0.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(tlsAddr)
	var n int
	fmt.Sscan(port, &n)
	params := sipmsg.NewParams()
	params.Add("transport", "tls")
	dialogs := sipgo.NewDialogClientCache(cli, sipmsg.ContactHeader{Address: sipmsg.Uri{User: "sbc", Host: "127.0.0.1", Port: 5061, UriParams: params}})
	a, refA := g711(t, "pocketsphinx-goforward.wav", "mulaw")
	b, refB := g711(t, "ls-test-clean-1089-134691-0001.wav", "mulaw")
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	connA, portA := udpPair(t)
	connB, portB := udpPair(t)
	sa, sb := newSRTPSender(t, suiteGCM, 0x52), newSRTPSender(t, suite32, 0x63)
	body := siprecBody(savpOffer([]int{portA, portB}, []string{sa.crypto(1), sb.crypto(2)}))
	dlg, err := dialogs.Invite(ctx, sipmsg.Uri{Scheme: "sip", User: "transcribe", Host: host, Port: n, UriParams: params}, []byte(body),
		sipmsg.NewHeader("Content-Type", "multipart/mixed;boundary=b0undary"), sipmsg.NewHeader("Require", "siprec"))
	if err != nil {
		t.Fatalf("invite: %v", err)
	}
	if err := dlg.WaitAnswer(ctx, sipgo.AnswerOptions{}); err != nil {
		t.Fatalf("SIPREC INVITE over TLS: %v", err)
	}
	if err := dlg.Ack(ctx); err != nil {
		t.Fatalf("ack: %v", err)
	}
	addrs := checkSRTPAnswer(t, dlg.InviteResponse.Body(), map[int]srtpSuite{0: suiteGCM, 1: suite32}, []int{1, 2})
	d.WaitLog(5*time.Second, `"msg":"sip call answered"`, `"srtp":"AEAD_AES_128_GCM,AES_CM_128_HMAC_SHA1_32"`, `"transport":"TLS"`)
	done := make(chan struct{})
	go func() { defer close(done); sendSRTP(t, connB, addrs[1], sb, b, 0, 8, 0xB, hostile{}) }()
	sendSRTP(t, connA, addrs[0], sa, a, 0, 8, 0xA, hostile{})
	<-done
	job := siprecJob(t, ctx, d, key, dlg, `"siprec_session_id":"ab30317f1a784dc48ff824d0d3715d86`, `"label":"2"`)
	for ch, ref := range []string{refA, refB} {
		text := channelText(job, ch)
		wer := recognizertest.WER(ref, text)
		t.Logf("channel %d WER %.3f: %s", ch, wer, text)
		if wer > werSIPAny || text == "" {
			t.Errorf("channel %d WER %.3f > %.3f", ch, wer, werSIPAny)
		}
	}
	ended := d.WaitLog(10*time.Second, `"msg":"sip call ended"`, dlg.InviteRequest.CallID().Value())
	if strings.Count(ended, "srtp_auth_failed=0 srtp_replayed=0") != 2 || !strings.Contains(ended, "sip: remote hung up") {
		t.Errorf("the call's end line: %s", ended)
	}
}
