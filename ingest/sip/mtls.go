package sip

import (
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"sync"

	sipmsg "github.com/emiago/sipgo/sip"

	"github.com/earshot-dev/earshot/config"
)

// Mutual TLS per route: a route with tls_client_ca takes calls only over
// TLS from a client whose certificate chains to one of that file's CAs
// (for client authentication) and, with tls_client_names, names one of
// them (its subject common name or a DNS subject alternative name), so an
// SBC is pinned by its certificate. The door asks every TLS client for a
// certificate when any route has tls_client_ca (tls.RequestClientCert:
// the handshake proves the client holds its key; the chain is checked per
// route, when the INVITE names one), and keeps each connection's
// certificates, by its remote address, while it is open (tlsPeers).

// validateMTLS checks route r's mutual TLS keys without I/O.
func (r Route) validateMTLS(key string, tlsOn bool) []error {
	var errs []error
	switch {
	case r.TLSClientCA == "" && len(r.TLSClientNames) > 0:
		errs = append(errs, config.Errorf(key+".tls_client_names", "needs tls_client_ca"))
	case r.TLSClientCA != "" && !tlsOn:
		errs = append(errs, config.Errorf(key+".tls_client_ca", "needs sip.tls_listen (mutual TLS is TLS)"))
	}
	for _, n := range r.TLSClientNames {
		if n == "" || strings.ContainsAny(n, " \t\r\n") {
			errs = append(errs, config.Errorf(key+".tls_client_names", "%q is not a name", n))
		}
	}
	return errs
}

// loadClientCAs reads a PEM file of CA certificates.
func loadClientCAs(path string) (*x509.CertPool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s holds no PEM certificate", path)
	}
	return pool, nil
}

// tlsPeers holds the client certificates of the open TLS connections that
// presented one, by remote address; bounded by the open connections.
type tlsPeers struct {
	mu    sync.Mutex
	certs map[string][]*x509.Certificate // guarded by mu
}

func (p *tlsPeers) set(addr net.Addr, certs []*x509.Certificate) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.certs[addr.String()] = certs
}

func (p *tlsPeers) forget(addr net.Addr) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.certs, addr.String())
}

func (p *tlsPeers) get(src string) []*x509.Certificate {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.certs[src]
}

// clientAllowed reports why req may not use route r for its client
// certificate, or "" when it may (or r does not pin one).
func (s *Server) clientAllowed(req *sipmsg.Request, r *route) string {
	roots := r.clientCAs.Load()
	if roots == nil {
		return ""
	}
	if !overTLS(req) {
		return "route takes calls over TLS only"
	}
	chain := s.peers.get(req.Source())
	if len(chain) == 0 {
		return "no client certificate"
	}
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	leaf := chain[0]
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		return "client certificate not of tls_client_ca"
	}
	if len(r.TLSClientNames) == 0 {
		return ""
	}
	for _, n := range r.TLSClientNames {
		if strings.EqualFold(leaf.Subject.CommonName, n) || slices.ContainsFunc(leaf.DNSNames, func(d string) bool { return strings.EqualFold(d, n) }) {
			return ""
		}
	}
	return "client certificate name not in tls_client_names"
}
