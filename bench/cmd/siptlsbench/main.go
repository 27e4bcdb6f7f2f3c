// Command siptlsbench measures TLS handshakes per second at the SIP door
// (sip.tls_listen, issue 37): the door runs in this process with its own
// certificate (ECDSA P-256, made at start), and -clients goroutines
// connect, complete a TLS 1.3 (or -tls12) handshake and close, for -dur,
// over loopback. Each handshake goes the door's whole way: acceptloop, the
// TCP bounds (tcpGuard), the bounded handshake, sipgo's connection. It
// prints handshakes a second and their latency quantiles, and the door's
// own count of completed and failed handshakes.
//
//	go run ./bench/cmd/siptlsbench [-clients 8] [-dur 5s] [-tls12]
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/earshot-dev/earshot/ingest"
	"github.com/earshot-dev/earshot/ingest/sip"
)

// noCalls is an opener that takes no call (the bench places none).
type noCalls struct{}

func (noCalls) OpenLive(context.Context, ingest.LiveRequest) (ingest.Session, error) {
	return nil, errors.New("siptlsbench: no calls")
}

func main() {
	clients := flag.Int("clients", 8, "concurrent connecting clients")
	dur := flag.Duration("dur", 5*time.Second, "how long to measure")
	tls12 := flag.Bool("tls12", false, "handshake TLS 1.2 instead of 1.3")
	flag.Parse()
	if err := run(*clients, *dur, *tls12); err != nil {
		fmt.Fprintln(os.Stderr, "siptlsbench:", err)
		os.Exit(1)
	}
}

func run(clients int, dur time.Duration, tls12 bool) error {
	dir, err := os.MkdirTemp("", "siptlsbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	certFile, keyFile, pool, err := makeCert(dir)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	cfg := sip.Config{TLSListen: ln.Addr().String(), TLSCert: certFile, TLSKey: keyFile, Allow: []string{"127.0.0.0/8"},
		AdvertiseIP: "127.0.0.1", MaxTCPConns: 4096, MaxTCPConnsPerSource: 4096}
	door, err := sip.New(cfg, noCalls{}, nil)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- door.Run(ctx, sip.Sockets{TLS: ln}) }()
	defer func() { cancel(); <-done }()

	ccfg := &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
	if tls12 {
		ccfg.MaxVersion = tls.VersionTLS12
	}
	var mu sync.Mutex
	var lat []time.Duration
	var errs int
	stop := time.Now().Add(dur)
	var wg sync.WaitGroup
	start := time.Now()
	for range clients {
		wg.Go(func() {
			var mine []time.Duration
			bad := 0
			for time.Now().Before(stop) {
				t0 := time.Now()
				c, err := tls.Dial("tcp", ln.Addr().String(), ccfg)
				if err != nil {
					bad++
					continue
				}
				mine = append(mine, time.Since(t0))
				c.Close()
			}
			mu.Lock()
			lat, errs = append(lat, mine...), errs+bad
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	slices.Sort(lat)
	q := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(p*float64(len(lat))))]
	}
	version := "TLS 1.3"
	if tls12 {
		version = "TLS 1.2"
	}
	completed, failed := door.TLSHandshakes()
	fmt.Printf("%s ECDSA P-256, %d clients, %s, GOMAXPROCS %d: %d handshakes, %.0f/s, p50 %s p99 %s, client errors %d; door: %d completed, %d failed\n",
		version, clients, elapsed.Round(time.Millisecond), runtime.GOMAXPROCS(0), len(lat), float64(len(lat))/elapsed.Seconds(),
		q(0.5).Round(time.Microsecond), q(0.99).Round(time.Microsecond), errs, completed, failed)
	return nil
}

// makeCert writes a self-signed certificate for 127.0.0.1 and its key.
func makeCert(dir string) (string, string, *x509.CertPool, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "siptlsbench"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", "", nil, err
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return "", "", nil, err
	}
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return "", "", nil, err
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		return "", "", nil, err
	}
	leaf, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return certFile, keyFile, pool, nil
}
