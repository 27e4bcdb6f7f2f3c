package e2e

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fasthttp/websocket"

	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key
// as PEM files in a temp dir, and returns their paths and a pool trusting
// the certificate.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "earshot e2e"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// fetch sends a request with client and returns status and body.
func fetch(t *testing.T, client *http.Client, method, url, key string, body io.Reader, ctype string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("x-service-key", key)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// TestTLS: with api.tls_cert/api.tls_key the API answers HTTPS only; the
// URLs it hands out are https and wss; an upload comes back byte for byte
// over HTTPS and a live session streams over WSS to a transcript; config
// check refuses an unusable pair, naming the key.
func TestTLS(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t)
	d := startDaemon(t, "", fmt.Sprintf("api:\n  tls_cert: %s\n  tls_key: %s\n", certFile, keyFile))
	d.WaitLog(10*time.Second, `"msg":"api listening"`, `"tls":true`)
	key := createKey(t, d.DataDir, "acme")
	host := strings.TrimPrefix(d.Base, "http://")
	base := "https://" + host
	tlsCfg := &tls.Config{RootCAs: pool}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsCfg}, Timeout: time.Minute}

	// Plain HTTP on the TLS port gets no answer.
	if resp, err := http.Get(d.Base + "/healthz"); err == nil {
		resp.Body.Close()
		t.Errorf("plain HTTP on the TLS listener answered %d", resp.StatusCode)
	}
	if status, _ := fetch(t, client, "GET", base+"/healthz", "", nil, ""); status != 200 {
		t.Errorf("GET /healthz over HTTPS: %d", status)
	}

	// Upload, then read the file back at the audio_url handed out.
	path, _ := clip(t, "pocketsphinx-goforward.wav")
	wav, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("audio", filepath.Base(path))
	fw.Write(wav)
	mw.Close()
	status, body := fetch(t, client, "POST", base+"/v2/upload", key, &buf, mw.FormDataContentType())
	var up uploadResponse
	if status != 200 || json.Unmarshal(body, &up) != nil || !strings.HasPrefix(up.AudioURL, base+"/v2/files/") {
		t.Fatalf("upload over HTTPS: %d %s", status, body)
	}
	if status, got := fetch(t, client, "GET", up.AudioURL, key, nil, ""); status != 200 || !bytes.Equal(got, wav) {
		t.Errorf("GET %s: %d, %d bytes, want the %d uploaded", up.AudioURL, status, len(got), len(wav))
	}
	status, body = fetch(t, client, "POST", base+"/v2/pre-recorded", key,
		strings.NewReader(`{"audio_url":"`+up.AudioURL+`"}`), "application/json")
	if status != 201 || !strings.Contains(string(body), `"result_url":"`+base+"/v2/pre-recorded/") {
		t.Errorf("POST /v2/pre-recorded over HTTPS: %d %s", status, body)
	}

	// A live session over WSS.
	lsPath, lsRef := clip(t, "ls-test-clean-1089-134686-0000.wav")
	audio := pcmOf(t, lsPath)
	status, body = fetch(t, client, "POST", base+"/v2/live", key,
		strings.NewReader(`{"messages_config":{"receive_lifecycle_events":true}}`), "application/json")
	var s liveSession
	if status != 201 || json.Unmarshal(body, &s) != nil || !strings.HasPrefix(s.URL, "wss://"+host+"/v2/live?token=") {
		t.Fatalf("POST /v2/live over HTTPS: %d %s", status, body)
	}
	if _, _, err := websocket.DefaultDialer.Dial("ws://"+strings.TrimPrefix(s.URL, "wss://"), nil); err == nil {
		t.Error("a plain ws:// dial to the TLS listener connected")
	}
	dialer := &websocket.Dialer{TLSClientConfig: tlsCfg, HandshakeTimeout: 10 * time.Second}
	conn, resp, err := dialer.Dial(s.URL, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", s.URL, err)
	}
	resp.Body.Close()
	msgs, code := runConn(t, conn, audio, 32, 0)
	if code != 1000 {
		t.Fatalf("WSS session closed %d", code)
	}
	checkLiveMessages(t, msgs, s.ID, int64(len(audio)), 32, 1)
	var job struct {
		Status string
		Result struct {
			Transcription struct {
				FullTranscript string `json:"full_transcript"`
			}
		}
	}
	status, body = fetch(t, client, "GET", base+"/v2/live/"+s.ID, key, nil, "")
	if status != 200 || json.Unmarshal(body, &job) != nil || job.Status != "done" {
		t.Fatalf("GET live job: %d %s", status, body)
	}
	wer := recognizertest.WER(lsRef, job.Result.Transcription.FullTranscript)
	t.Logf("WER %.3f over WSS: %s", wer, job.Result.Transcription.FullTranscript)
	if wer > werLiveLS {
		t.Errorf("WER %.3f > %.3f (TestLiveWebSocket's bound)", wer, werLiveLS)
	}
	if status, got := fetch(t, client, "GET", base+"/v2/live/"+s.ID+"/file", key, nil, ""); status != 200 || len(got) < 44 || !bytes.Equal(got[44:], audio) {
		t.Errorf("live file over HTTPS: %d, %d bytes, want 44+%d identical", status, len(got), len(audio))
	}

	// config check: a key that is not the certificate's, a missing file,
	// and only one of the two.
	otherCert, _, _ := selfSigned(t)
	for _, c := range []struct{ name, yaml string }{
		{"mismatched pair", fmt.Sprintf("api:\n  tls_cert: %s\n  tls_key: %s\n", otherCert, keyFile)},
		{"missing file", fmt.Sprintf("api:\n  tls_cert: %s\n  tls_key: %s\n", certFile+".gone", keyFile)},
		{"cert only", fmt.Sprintf("api:\n  tls_cert: %s\n", certFile)},
	} {
		p := filepath.Join(t.TempDir(), "earshot.yaml")
		os.WriteFile(p, []byte(c.yaml), 0o600)
		out, err := runCLI("config", "check", p)
		if err == nil || !strings.Contains(out, "api.tls_cert (line 2)") {
			t.Errorf("config check, %s: %v %q", c.name, err, out)
		}
	}
	p := filepath.Join(t.TempDir(), "earshot.yaml")
	os.WriteFile(p, []byte(fmt.Sprintf("api:\n  tls_cert: %s\n  tls_key: %s\n", certFile, keyFile)), 0o600)
	if out, err := runCLI("config", "check", p); err != nil || strings.TrimSpace(out) != "ok" {
		t.Errorf("config check, good pair: %v %q", err, out)
	}
}

// TestOpsListener: with ops_listen set, /healthz, /readyz and /metrics
// answer there (and nothing else does), from before the recovery, and the
// main listener answers them 404 with the contract's error body.
func TestOpsListener(t *testing.T) {
	d := startDaemon(t, "", "ops_listen: 127.0.0.1:0\n")
	line := d.WaitLog(10*time.Second, `"msg":"ops listening"`)
	var rec struct{ Addr string }
	if err := json.Unmarshal([]byte(line), &rec); err != nil || rec.Addr == "" {
		t.Fatalf("ops listening line %q", line)
	}
	ops := "http://" + rec.Addr
	if ops == d.Base {
		t.Fatalf("ops on the main address %s", ops)
	}
	// The ops door opens before the recovery, so that a probe during a
	// long one reads "not ready" (daemon TestNotReadyWhileRecovering).
	d.WaitLog(10*time.Second, `"msg":"api listening"`)
	if opsAt, started := d.index(`"msg":"ops listening"`), d.index(`"msg":"daemon started"`); opsAt < 0 || started < opsAt {
		t.Errorf("ops listening at log line %d, daemon started at %d: the ops door waited for the recovery", opsAt, started)
	}
	key := createKey(t, d.DataDir, "acme")
	client := &http.Client{Timeout: time.Minute}
	if status, body := d.do("GET", "/v2/pre-recorded", key, nil, "", nil); status != 200 {
		t.Fatalf("main listener /v2: %d %s", status, body)
	}
	for _, p := range []string{"/healthz", "/readyz", "/metrics"} {
		status, body := fetch(t, client, "GET", ops+p, "", nil, "")
		if status != 200 {
			t.Errorf("ops %s: %d %s", p, status, body)
		}
		if p == "/metrics" && !strings.Contains(string(body), `earshot_http_requests_total{method="GET",route="/v2/pre-recorded",status="200"} 1`) {
			t.Errorf("ops /metrics does not count the main listener's request:\n%s", body)
		}
		var eb errBody
		st, _ := d.do("GET", p, "", nil, "", &eb)
		checkError(t, st, eb, 404, "main listener "+p)
	}
	for _, p := range []string{"/v2/pre-recorded", "/admin/keys", "/console"} {
		if status, _ := fetch(t, client, "GET", ops+p, key, nil, ""); status != 404 {
			t.Errorf("ops listener serves %s: %d", p, status)
		}
	}
}
