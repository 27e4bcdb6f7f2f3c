package sip

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeCert writes a self-signed certificate (with ips as its SANs) and
// its key into dir.
func writeCert(t *testing.T, dir, name string, notAfter time.Time, ips ...string) (string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-2 * time.Hour), NotAfter: notAfter}
	for _, ip := range ips {
		tmpl.IPAddresses = append(tmpl.IPAddresses, net.ParseIP(ip))
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	cf, kf := filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	os.WriteFile(cf, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(kf, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	return cf, kf
}

// TestCheckTLS: what config check reports of the door's certificate.
func TestCheckTLS(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	good, goodKey := writeCert(t, dir, "good", now.Add(time.Hour), "127.0.0.1")
	_, otherKey := writeCert(t, dir, "other", now.Add(time.Hour), "127.0.0.1")
	noSAN, noSANKey := writeCert(t, dir, "nosan", now.Add(time.Hour))
	old, oldKey := writeCert(t, dir, "old", now.Add(-time.Hour), "127.0.0.1")
	for _, c := range []struct {
		name, cert, key, want string
	}{
		{"good", good, goodKey, ""},
		{"key of another certificate", good, otherKey, "tls_cert: with tls_key: load tls pair"},
		{"missing file", good + ".gone", goodKey, "no such file"},
		{"no san", noSAN, noSANKey, "tls_cert: has no subject alternative name"},
		{"expired", old, oldKey, "tls_cert: expired"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := Config{TLSListen: "127.0.0.1:5061", TLSCert: c.cert, TLSKey: c.key}
			err := cfg.CheckTLS(now)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("CheckTLS = %v, want nil", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("CheckTLS = %v, want %q", err, c.want)
			}
		})
	}
	if err := (Config{TLSCert: good + ".gone", TLSKey: goodKey}).CheckTLS(now); err != nil {
		t.Errorf("CheckTLS without tls_listen = %v, want nil (the door is off)", err)
	}
}

// TestValidateTLS: the TLS keys' rules without I/O.
func TestValidateTLS(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
		want []string // keys named
	}{
		{"off", Config{}, nil},
		{"complete", Config{TLSListen: "0.0.0.0:5061", TLSCert: "c", TLSKey: "k", Allow: []string{"10.0.0.0/8"}}, nil},
		{"no pair, no allow", Config{TLSListen: "0.0.0.0:5061"}, []string{"tls_cert", "tls_key", "allow"}},
		{"same port as listen", Config{Listen: "0.0.0.0:5060", TLSListen: "0.0.0.0:5060", TLSCert: "c", TLSKey: "k", Allow: []string{"10.0.0.0/8"}}, []string{"tls_listen"}},
		{"not host:port", Config{TLSListen: "5061", TLSCert: "c", TLSKey: "k", Allow: []string{"10.0.0.0/8"}}, []string{"tls_listen"}},
		{"handshake timeout", Config{TLSListen: ":5061", TLSCert: "c", TLSKey: "k", Allow: []string{"10.0.0.0/8"}, TLSHandshakeTimeout: time.Hour}, []string{"tls_handshake_timeout"}},
		{"client ca without tls", Config{Listen: ":5060", Allow: []string{"10.0.0.0/8"}, Routes: []Route{{User: "sbc", Account: "a", TLSClientCA: "ca.pem"}}}, []string{"routes[0].tls_client_ca"}},
		{"client names without ca", Config{TLSListen: ":5061", TLSCert: "c", TLSKey: "k", Allow: []string{"10.0.0.0/8"}, Routes: []Route{{User: "sbc", Account: "a", TLSClientNames: []string{"sbc.example"}}}}, []string{"routes[0].tls_client_names"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.SetDefaults()
			err := c.cfg.Validate()
			for _, k := range c.want {
				if err == nil || !strings.Contains(err.Error(), k+":") {
					t.Errorf("Validate = %v, want a problem of %s", err, k)
				}
			}
			if len(c.want) == 0 && err != nil {
				t.Errorf("Validate = %v, want nil", err)
			}
		})
	}
}
