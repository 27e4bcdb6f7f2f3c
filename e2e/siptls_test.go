package e2e

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/icholy/digest"

	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// sipTLSConfig is a door on UDP, TCP and TLS (cert and key filled in).
const sipTLSConfig = `
sip:
  listen: 127.0.0.1:0
  tls_listen: 127.0.0.1:0
  tls_cert: %s
  tls_key: %s
  rtp_ports: 31920-31999
  allow: [127.0.0.0/8]
  routes:
    - user: plain
      account: acme
      live: {custom_metadata: {call: plain}}
    - user: secure
      account: acme
      live: {custom_metadata: {call: secure}}
      # baresip 1.0 (libre) gives up on a SHA-256 challenge: offer MD5 only.
      auth: {username: phone, password: s3cret, algorithms: [MD5]}
`

// sipTLSAddrRE finds the TLS door's address in its "sip listening" line.
var sipTLSAddrRE = regexp.MustCompile(`"tls_addr":"([0-9.]+:[0-9]+)"`)

// testCert writes a self-signed certificate for 127.0.0.1 and localhost,
// valid from an hour ago until notAfter (its own CA: a client trusts it as
// its CA file), and its key, into dir; it returns their paths.
func testCert(t *testing.T, dir, name string, notAfter time.Time) (certFile, keyFile string) {
	t.Helper()
	return testCertFor(t, dir, name, notAfter, "127.0.0.1")
}

// testCertFor is testCert for the IP addresses ips.
func testCertFor(t *testing.T, dir, name string, notAfter time.Time, ips ...string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
	}
	for _, ip := range ips {
		tmpl.IPAddresses = append(tmpl.IPAddresses, net.ParseIP(ip))
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// startSIPTLSDaemon starts a door on UDP, TCP and TLS with cfg (the
// sipTLSConfig format filled in with a fresh certificate) and returns it,
// its plain address, its TLS address and the certificate file.
func startSIPTLSDaemon(t *testing.T, format string) (d *daemonProc, addr, tlsAddr, certFile string) {
	t.Helper()
	certFile, keyFile := testCert(t, t.TempDir(), "earshot", time.Now().Add(24*time.Hour))
	d, addr = startSIPDaemon(t, telephoneModel(t)+fillTLS(format, certFile, keyFile))
	m := sipTLSAddrRE.FindStringSubmatch(d.WaitLog(5*time.Second, "sip listening"))
	if m == nil {
		t.Fatal("no tls_addr in the sip listening line")
	}
	return d, addr, m[1], certFile
}

// fillTLS puts the certificate and key paths in format's two %s.
func fillTLS(format, certFile, keyFile string) string {
	format = strings.Replace(format, "%s", certFile, 1)
	return strings.Replace(format, "%s", keyFile, 1)
}

// wordErrors is the number of word errors of hyp against ref (WER times
// the reference's words).
func wordErrors(ref, hyp string) int {
	return int(recognizertest.WER(ref, hyp)*float64(len(strings.Fields(ref))) + 0.5)
}

// TestSIPTLSBaresip places the same clip from real baresip twice: over
// plain UDP, and over SIP/TLS (;transport=tls, baresip checking the
// door's certificate against its CA file) to a route with digest auth,
// baresip answering the 401 with its credentials. Both are answered and
// transcribed, the TLS call within one word of the UDP call's errors, and
// the TLS call's INVITE came over the TLS door (its handshake counted).
// A SIGHUP while the TLS call runs reloads the certificate and the call
// runs on to the caller's BYE.
func TestSIPTLSBaresip(t *testing.T) {
	d, addr, tlsAddr, certFile := startSIPTLSDaemon(t, sipTLSConfig)
	key := createKey(t, d.DataDir, "acme")
	wav16, ref := clip(t, codecClip)
	wav8 := narrowband(t, wav16)
	errs := map[string]int{}
	for _, c := range []struct{ user, uri string }{
		{"plain", "sip:plain@" + addr},
		{"secure", "sip:secure@" + tlsAddr + ";transport=tls"},
	} {
		var reloaded chan bool
		if c.user == "secure" {
			// SIGHUP (the certificate reloaded) while the TLS call runs.
			reloaded = make(chan bool, 1)
			go func() {
				deadline := time.Now().Add(20 * time.Second)
				for len(d.linesWith(`"msg":"sip call answered"`)) < 2 && time.Now().Before(deadline) {
					time.Sleep(50 * time.Millisecond) // polling a real process
				}
				reloaded <- d.cmd.Process.Signal(syscall.SIGHUP) == nil
			}()
		}
		baresip(t, c.uri, "PCMU/8000/1", wav8, 8000, 16*time.Second, "sip_cafile "+certFile, "account;auth_pass=s3cret")
		if reloaded != nil && !<-reloaded {
			t.Fatal("no SIGHUP sent during the TLS call")
		}
		job := liveJobByMetadata(t, d, key, "call", c.user, 60*time.Second)
		if job["status"] != "done" {
			t.Fatalf("%s: job %v", c.user, job["status"])
		}
		got := fullTranscript(job)
		errs[c.user] = wordErrors(ref, got)
		t.Logf("%s: %d word errors (WER %.3f) %q", c.user, errs[c.user], recognizertest.WER(ref, got), got)
	}
	if diff := errs["secure"] - errs["plain"]; diff > 1 || diff < -1 {
		t.Errorf("TLS call %d word errors, UDP call %d: more than one word apart", errs["secure"], errs["plain"])
	}
	if n := d.metric("earshot_sip_tls_handshakes_total"); n < 1 {
		t.Errorf("earshot_sip_tls_handshakes_total %v: the TLS call did not come over TLS", n)
	}
	// The reload happened while the call was up, and the call still ran
	// to its end (baresip's BYE: "sip: remote hung up"). The door logs a
	// call's end once its session has ended, which may be just after the
	// job shows done: wait for both calls' lines.
	for deadline := time.Now().Add(20 * time.Second); d.logCount(`"msg":"sip call ended"`) < 2 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond) // polling a real process
	}
	answered, reload, ended := -1, -1, -1 // the TLS call's lines: answered, reloaded, ended
	d.mu.Lock()
	for i, l := range d.lines {
		switch {
		case strings.Contains(l, `"msg":"sip call answered"`):
			answered = i
		case strings.Contains(l, "sip tls certificate loaded"):
			reload = i
		case strings.Contains(l, `"msg":"sip call ended"`) && strings.Contains(l, "remote hung up"):
			ended = i
		}
	}
	d.mu.Unlock()
	if !(answered < reload && reload < ended) {
		t.Errorf("log lines: TLS call answered %d, certificate reloaded %d, call ended by the caller's BYE %d; want the reload while the call ran", answered, reload, ended)
	}
}

// tlsOptions sends an OPTIONS over c and returns the response's status
// line.
func tlsOptions(t *testing.T, c net.Conn, seq int) string {
	t.Helper()
	local := c.LocalAddr().String()
	req := fmt.Sprintf("OPTIONS sip:probe@127.0.0.1;transport=tls SIP/2.0\r\n"+
		"Via: SIP/2.0/TLS %s;branch=z9hG4bK-tls-%d\r\nMax-Forwards: 70\r\nFrom: <sip:probe@127.0.0.1>;tag=p%d\r\n"+
		"To: <sip:probe@127.0.0.1>\r\nCall-ID: tls-probe-%d\r\nCSeq: %d OPTIONS\r\nContent-Length: 0\r\n\r\n", local, seq, seq, seq, seq)
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte(req)); err != nil {
		t.Fatalf("write OPTIONS: %v", err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatalf("read OPTIONS response: %v", err)
	}
	return strings.TrimSpace(line)
}

// TestSIPTLSBoundsAndReload: connections to the TLS door that never
// finish a handshake (silent ones, and ones sending plain SIP) are closed
// within sip.tls_handshake_timeout, counted and logged, while a TLS
// connection beside them is served. SIGHUP loads a renewed certificate:
// new handshakes present it, and the connection opened before the reload
// is still served. config check names an expired certificate.
func TestSIPTLSBoundsAndReload(t *testing.T) {
	d, _, tlsAddr, certFile := startSIPTLSDaemon(t, strings.Replace(sipTLSConfig, "  routes:", "  tls_handshake_timeout: 1s\n  routes:", 1))
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(mustRead(t, certFile))

	var stalled []net.Conn
	for i := range 20 {
		c, err := net.Dial("tcp", tlsAddr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if i%4 == 0 {
			c.Write([]byte("OPTIONS sip:x@127.0.0.1 SIP/2.0\r\n\r\n")) // not a TLS record
		}
		stalled = append(stalled, c)
	}
	good, err := tls.Dial("tcp", tlsAddr, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatalf("tls dial: %v", err)
	}
	defer good.Close()
	if got := tlsOptions(t, good, 1); got != "SIP/2.0 200 OK" {
		t.Errorf("OPTIONS over TLS: %q", got)
	}
	start := time.Now()
	for _, c := range stalled {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.Copy(io.Discard, c); err != nil {
			t.Errorf("a connection without a handshake was not closed: %v", err)
		}
	}
	if e := time.Since(start); e > 3*time.Second {
		t.Errorf("stalled handshakes closed after %s; tls_handshake_timeout is 1s", e)
	}
	d.WaitLog(5*time.Second, "sip tls handshake failed")
	// Counted once the door's handshake returns, just after it closed the
	// connection: poll.
	for deadline := time.Now().Add(5 * time.Second); d.metric("earshot_sip_tls_handshake_failures_total") < 20 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond) // polling a real process
	}
	if n := d.metric("earshot_sip_tls_handshake_failures_total"); n != 20 {
		t.Errorf("earshot_sip_tls_handshake_failures_total %v, want 20", n)
	}
	if n := len(d.linesWith("connection pool not clean cleanup")); n > 0 {
		t.Errorf("%d log lines of the SIP stack for closing the failed connections; want none (one line per connection of a flood)", n)
	}
	if n := d.metric("earshot_sip_tcp_connections"); n != 1 {
		t.Errorf("earshot_sip_tcp_connections %v after the stalled ones closed, want 1 (the good one)", n)
	}

	// A renewed certificate, written over the files, taken on SIGHUP.
	renewedCert, renewedKey := testCert(t, t.TempDir(), "renewed", time.Now().Add(48*time.Hour))
	for from, to := range map[string]string{renewedCert: certFile, renewedKey: strings.TrimSuffix(certFile, ".crt") + ".key"} {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	d.WaitLog(5*time.Second, "sip tls certificate loaded", "CN=renewed")
	pool.AppendCertsFromPEM(mustRead(t, renewedCert))
	again, err := tls.Dial("tcp", tlsAddr, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatalf("tls dial after reload: %v", err)
	}
	defer again.Close()
	if cn := again.ConnectionState().PeerCertificates[0].Subject.CommonName; cn != "renewed" {
		t.Errorf("after SIGHUP the door presents %q, want the renewed certificate", cn)
	}
	if got := tlsOptions(t, good, 2); got != "SIP/2.0 200 OK" {
		t.Errorf("OPTIONS over the connection opened before the reload: %q", got)
	}

	// config check: an expired certificate is named.
	expired, expiredKey := testCert(t, t.TempDir(), "expired", time.Now().Add(-time.Minute))
	p := filepath.Join(t.TempDir(), "earshot.yaml")
	os.WriteFile(p, []byte(fillTLS("sip:\n  tls_listen: 127.0.0.1:5061\n  tls_cert: %s\n  tls_key: %s\n  allow: [127.0.0.1]\n", expired, expiredKey)), 0o600)
	if out, err := runCLI("config", "check", p); err == nil || !strings.Contains(out, "sip.tls_cert (line 3): expired") {
		t.Errorf("config check of an expired certificate: %v %q", err, out)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// tlsInvite sends an INVITE to user over c (authorization "" sends none)
// and returns the final response's status code, its WWW-Authenticate
// values and its To header.
func tlsInvite(t *testing.T, c net.Conn, r *bufio.Reader, user string, seq int, authorization string) (int, []string, string) {
	t.Helper()
	res := rawInvite(t, c, r, "sip:"+user+"@127.0.0.1;transport=tls", "TLS", user, seq, authorization)
	return res.code, res.challenges, res.to
}

// TestSIPDigestAuth: a route with auth challenges an INVITE without
// credentials (401, SHA-256 then MD5, a fresh nonce each time), answers
// the right ones once (the call's BYE then comes over its TLS connection;
// the same Authorization again is a replay: 403), refuses
// wrong credentials (403) and creates no session; past
// sip.auth_max_failures a source's INVITEs get 403 unchallenged, logged
// and counted; the password is in no log line.
func TestSIPDigestAuth(t *testing.T) {
	cfg := strings.Replace(sipTLSConfig, "  routes:", "  auth_max_failures: 4\n  routes:", 1)
	cfg = strings.Replace(cfg, ", algorithms: [MD5]", "", 1) // the default: SHA-256, MD5
	cfg = strings.Replace(cfg, "  routes:", "  rtp_timeout: 1s\n  routes:", 1)
	d, _, tlsAddr, certFile := startSIPTLSDaemon(t, cfg)
	key := createKey(t, d.DataDir, "acme")
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(mustRead(t, certFile))
	c, err := tls.Dial("tcp", tlsAddr, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)

	code, chals, _ := tlsInvite(t, c, r, "secure", 1, "")
	if code != 401 || len(chals) != 2 || !strings.Contains(chals[0], "algorithm=SHA-256") || !strings.Contains(chals[1], "algorithm=MD5") {
		t.Fatalf("INVITE without credentials: %d %q; want 401 with SHA-256 and MD5 challenges", code, chals)
	}
	_, again, _ := tlsInvite(t, c, r, "secure", 2, "")
	if len(again) == 0 || again[0] == chals[0] {
		t.Errorf("the second challenge %q repeats the first: nonces must be fresh", again)
	}

	// The right password with SHA-256: answered. The call gets no RTP, so
	// the door ends it after rtp_timeout with a BYE, which must come over
	// this connection.
	chal, err := digest.ParseChallenge(again[0])
	if err != nil {
		t.Fatal(err)
	}
	creds, err := digest.Digest(chal, digest.Options{Method: "INVITE", URI: "sip:secure@127.0.0.1;transport=tls", Username: "phone", Password: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	code, _, to := tlsInvite(t, c, r, "secure", 3, creds.String())
	if code != 200 {
		t.Fatalf("INVITE with the right SHA-256 credentials: %d, want 200", code)
	}
	ack := fmt.Sprintf("ACK sip:earshot@127.0.0.1;transport=tls SIP/2.0\r\nVia: SIP/2.0/TLS %s;branch=z9hG4bK-ack-3\r\nMax-Forwards: 70\r\n"+
		"From: <sip:phone@127.0.0.1>;tag=f3\r\nTo: %s\r\nCall-ID: tls-invite-3\r\nCSeq: 1 ACK\r\nContent-Length: 0\r\n\r\n", c.LocalAddr(), to)
	if _, err := c.Write([]byte(ack)); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(15 * time.Second))
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("no BYE over the call's TLS connection: %v", err)
		}
		if strings.HasPrefix(line, "BYE ") {
			break
		}
	}
	d.WaitLog(10*time.Second, `"msg":"sip call ended"`, "tls-invite-3")

	// The same Authorization again, in a new INVITE (a captured one
	// replayed): 403, the first failure.
	if code, _, _ := tlsInvite(t, c, r, "secure", 4, creds.String()); code != 403 {
		t.Errorf("replayed credentials: %d, want 403", code)
	}
	for i, alg := range []string{"SHA-256", "MD5", "SHA-256"} {
		ch := chals[0]
		if alg == "MD5" {
			ch = chals[1]
		}
		chal, err := digest.ParseChallenge(ch)
		if err != nil {
			t.Fatal(err)
		}
		creds, err := digest.Digest(chal, digest.Options{Method: "INVITE", URI: "sip:secure@127.0.0.1;transport=tls", Username: "phone", Password: "guess"})
		if err != nil {
			t.Fatal(err)
		}
		if code, _, _ := tlsInvite(t, c, r, "secure", 10+i, creds.String()); code != 403 {
			t.Errorf("wrong password (%s): %d, want 403", alg, code)
		}
	}
	d.WaitLog(5*time.Second, "sip source failed authentication too often", `"auth_max_failures":4`)
	if code, chals, _ := tlsInvite(t, c, r, "secure", 20, ""); code != 403 || len(chals) != 0 {
		t.Errorf("INVITE from a source past auth_max_failures: %d %q, want 403 unchallenged", code, chals)
	}
	if n := d.metric("earshot_sip_auth_failures_total"); n != 4 {
		t.Errorf("earshot_sip_auth_failures_total %v, want 4 (a replay, three wrong passwords)", n)
	}
	if n := d.metric("earshot_sip_auth_refused_total"); n != 1 {
		t.Errorf("earshot_sip_auth_refused_total %v, want 1", n)
	}
	var page struct {
		Items []map[string]any `json:"items"`
	}
	if status, body := d.do("GET", "/v2/live", key, nil, "", &page); status != 200 || len(page.Items) != 1 {
		t.Errorf("GET /v2/live: %d, %d sessions (%s); want the authenticated call's only", status, len(page.Items), body)
	}
	if code, _, _ := tlsInvite(t, c, r, "nobody", 30, ""); code != 404 {
		t.Errorf("INVITE to no route: %d, want 404: a source's failures refuse only routes with auth", code)
	}
	for _, line := range append(d.linesWith("s3cret"), d.linesWith("guess")...) {
		t.Errorf("a log line holds a password: %s", line)
	}
}

// TestSIPMutualTLS: a route with tls_client_ca and tls_client_names takes
// a call over TLS only from a client certificate of that CA file naming
// one of those names (an SBC pinned by its certificate): no certificate,
// a certificate of another CA and one of the CA file with another name
// each get 403 and no session; the pinned SBC's INVITE is answered, and
// refused once a SIGHUP has reloaded the CA file without its CA.
func TestSIPMutualTLS(t *testing.T) {
	dir := t.TempDir()
	sbcCert, sbcKey := testCert(t, dir, "sbc.example", time.Now().Add(time.Hour))
	otherCert, otherKey := testCert(t, dir, "other.example", time.Now().Add(time.Hour))
	strangerCert, strangerKey := testCert(t, dir, "stranger.example", time.Now().Add(time.Hour))
	caFile := filepath.Join(dir, "sbc-ca.pem")
	if err := os.WriteFile(caFile, append(mustRead(t, sbcCert), mustRead(t, otherCert)...), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := sipTLSConfig + "    - user: sbc\n      account: acme\n      live: {custom_metadata: {call: sbc}}\n" +
		"      tls_client_ca: " + caFile + "\n      tls_client_names: [sbc.example]\n"
	d, _, tlsAddr, certFile := startSIPTLSDaemon(t, cfg)
	key := createKey(t, d.DataDir, "acme")
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(mustRead(t, certFile))
	dial := func(certFile, keyFile string) (net.Conn, *bufio.Reader) {
		t.Helper()
		cfg := &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
		if certFile != "" {
			pair, err := tls.LoadX509KeyPair(certFile, keyFile)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Certificates = []tls.Certificate{pair}
		}
		c, err := tls.Dial("tcp", tlsAddr, cfg)
		if err != nil {
			t.Fatalf("tls dial: %v", err)
		}
		t.Cleanup(func() { c.Close() })
		return c, bufio.NewReader(c)
	}
	for i, c := range []struct{ name, cert, key string }{
		{"no certificate", "", ""},
		{"another CA", strangerCert, strangerKey},
		{"the CA file, another name", otherCert, otherKey},
	} {
		conn, r := dial(c.cert, c.key)
		if code, _, _ := tlsInvite(t, conn, r, "sbc", 40+i, ""); code != 403 {
			t.Errorf("%s: %d, want 403", c.name, code)
		}
	}
	var page struct {
		Items []map[string]any `json:"items"`
	}
	if d.do("GET", "/v2/live", key, nil, "", &page); len(page.Items) != 0 {
		t.Errorf("%d sessions after refused calls, want none", len(page.Items))
	}
	conn, r := dial(sbcCert, sbcKey)
	if code, _, _ := tlsInvite(t, conn, r, "sbc", 50, ""); code != 200 {
		t.Errorf("the pinned SBC's INVITE: %d, want 200", code)
	}
	if n := d.metric("earshot_sip_auth_failures_total"); n != 3 {
		t.Errorf("earshot_sip_auth_failures_total %v, want 3", n)
	}

	// The CA file rewritten without the SBC's certificate and reloaded
	// (SIGHUP): its next INVITE, on a new connection, is refused.
	if err := os.WriteFile(caFile, mustRead(t, otherCert), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	d.WaitLog(5*time.Second, "sip tls client CAs loaded", `"route":"sbc"`)
	conn, r = dial(sbcCert, sbcKey)
	if code, _, _ := tlsInvite(t, conn, r, "sbc", 51, ""); code != 403 {
		t.Errorf("the SBC's INVITE after its CA was removed and reloaded: %d, want 403", code)
	}
}
