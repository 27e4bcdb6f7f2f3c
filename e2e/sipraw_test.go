package e2e

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// rawReply is the final response to rawInvite: its status code, its
// WWW-Authenticate values, its To and its Contact header.
type rawReply struct {
	code        int
	challenges  []string
	to, contact string
}

// rawInvite sends an INVITE to the request-URI ruri (for user) over c,
// whose Via names transport (TLS, TCP), and reads its final response.
func rawInvite(t *testing.T, c net.Conn, r *bufio.Reader, ruri, transport, user string, seq int, authorization string) rawReply {
	t.Helper()
	sdpBody := "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n"
	var auth string
	if authorization != "" {
		auth = "Authorization: " + authorization + "\r\n"
	}
	contactParams := ""
	if transport == "TLS" {
		contactParams = ";transport=tls"
	}
	req := fmt.Sprintf("INVITE %s SIP/2.0\r\n"+
		"Via: SIP/2.0/%s %s;branch=z9hG4bK-inv-%d\r\nMax-Forwards: 70\r\nFrom: <sip:phone@127.0.0.1>;tag=f%d\r\n"+
		"To: <sip:%s@127.0.0.1>\r\nCall-ID: tls-invite-%d\r\nCSeq: 1 INVITE\r\nContact: <sip:phone@%s%s>\r\n%s"+
		"Content-Type: application/sdp\r\nContent-Length: %d\r\n\r\n%s",
		ruri, transport, c.LocalAddr(), seq, seq, user, seq, c.LocalAddr(), contactParams, auth, len(sdpBody), sdpBody)
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte(req)); err != nil {
		t.Fatalf("write INVITE: %v", err)
	}
	for {
		var res rawReply
		length := 0
		for first := true; ; first = false {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("read INVITE response: %v", err)
			}
			line = strings.TrimSpace(line)
			if line == "" {
				break
			}
			if first {
				fmt.Sscanf(line, "SIP/2.0 %d", &res.code)
			}
			if v, ok := strings.CutPrefix(line, "WWW-Authenticate: "); ok {
				res.challenges = append(res.challenges, v)
			}
			if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
				fmt.Sscan(v, &length)
			}
			if v, ok := strings.CutPrefix(line, "To: "); ok {
				res.to = v
			}
			if v, ok := strings.CutPrefix(line, "Contact: "); ok {
				res.contact = v
			}
		}
		io.CopyN(io.Discard, r, int64(length))
		if res.code >= 200 {
			return res
		}
	}
}

// TestSIPSURI: an INVITE to a sips: URI (RFC 5630) over TLS is answered
// 200 with a sips: Contact, so the caller's in-dialog requests stay on
// TLS; the same INVITE over plain TCP is refused 416 (a SIPS request
// travels over TLS on every hop) and creates no session.
func TestSIPSURI(t *testing.T) {
	d, addr, tlsAddr, certFile := startSIPTLSDaemon(t, sipTLSConfig)
	key := createKey(t, d.DataDir, "acme")
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(mustRead(t, certFile))

	plain, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { plain.Close() })
	if res := rawInvite(t, plain, bufio.NewReader(plain), "sips:plain@127.0.0.1", "TCP", "plain", 60, ""); res.code != 416 {
		t.Errorf("sips: INVITE over TCP: %d, want 416", res.code)
	}
	d.WaitLog(5*time.Second, `"msg":"sip call refused"`, `"status":416`)
	var page struct {
		Items []map[string]any `json:"items"`
	}
	if d.do("GET", "/v2/live", key, nil, "", &page); len(page.Items) != 0 {
		t.Errorf("%d sessions after the refused sips: INVITE, want none", len(page.Items))
	}

	c, err := tls.Dial("tcp", tlsAddr, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatalf("tls dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	res := rawInvite(t, c, bufio.NewReader(c), "sips:plain@127.0.0.1", "TLS", "plain", 61, "")
	if res.code != 200 {
		t.Fatalf("sips: INVITE over TLS: %d, want 200", res.code)
	}
	if !strings.HasPrefix(res.contact, "<sips:") {
		t.Errorf("the 200's Contact %q is not a sips: URI", res.contact)
	}
}
