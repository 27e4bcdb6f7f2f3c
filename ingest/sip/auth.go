package sip

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sipmsg "github.com/emiago/sipgo/sip"
	"github.com/icholy/digest"

	"github.com/earshot-dev/earshot/config"
	"github.com/earshot-dev/earshot/ingest"
)

// Digest authentication of a route's calls (RFC 3261 section 22, with the
// algorithms of RFC 8760 / RFC 7616: SHA-256 offered first, then MD5): an
// INVITE to a route with auth and no Authorization gets 401 with a fresh
// nonce; a stale nonce (older than nonceLifetime, else good) gets 401 with
// stale=true; wrong credentials get 403 and count against their source.
// A source with Config.AuthMaxFailures failures in authWindow gets 403
// without a challenge for the rest of the window, with one log line.
//
// Nonces are stateless: the time they were made and an HMAC of it and the
// caller's address under a key of this process, so a challenge costs no
// memory and a nonce is good only from the address it was sent to.
// Neither the password nor the Authorization header is logged.
//
// Credentials are good once: the nonce, nonce count and client nonce of
// each accepted Authorization are kept until the nonce is stale (at most
// maxUsedCredentials of them), and the same again is a replay (403), so a
// captured INVITE cannot be sent again to place a call.
const (
	nonceLifetime      = 5 * time.Minute
	authWindow         = time.Minute
	defaultRealm       = "earshot"
	maxUsedCredentials = 65536
)

// RouteAuth is a route's digest credentials; an empty Username turns
// authentication off.
type RouteAuth struct {
	// Username the caller authenticates as.
	Username string `yaml:"username"`
	// Password in clear (kept out of logs); or set PasswordHash.
	Password config.Secret `yaml:"password"`
	// PasswordHash is the hex H(username:realm:password), 32 digits for
	// MD5 or 64 for SHA-256 (only that algorithm is then offered), e.g.
	// `printf '%s' 'user:earshot:pass' | sha256sum`.
	PasswordHash config.Secret `yaml:"password_hash"`
	// Realm of the challenge; default "earshot".
	Realm string `yaml:"realm"`
	// Algorithms offered, one challenge each, preferred first: SHA-256,
	// MD5; default both (RFC 8760 order). Some clients (baresip 1.0) give
	// up on a challenge they cannot answer instead of taking the next:
	// [MD5] for them. A password_hash fixes its one algorithm.
	Algorithms []string `yaml:"algorithms"`
}

// on reports whether the route requires authentication.
func (a RouteAuth) on() bool { return a.Username != "" }

func (a RouteAuth) realm() string {
	if a.Realm == "" {
		return defaultRealm
	}
	return a.Realm
}

// algorithms are the digest algorithms offered, preferred first.
func (a RouteAuth) algorithms() []string {
	switch len(a.PasswordHash) {
	case 32:
		return []string{"MD5"}
	case 64:
		return []string{"SHA-256"}
	}
	if len(a.Algorithms) > 0 {
		return a.Algorithms
	}
	return []string{"SHA-256", "MD5"}
}

// validate checks the route's auth; key is its config key.
func (a RouteAuth) validate(key string) []error {
	var errs []error
	add := func(k, format string, args ...any) { errs = append(errs, config.Errorf(key+"."+k, format, args...)) }
	if !a.on() {
		if a.Password != "" || a.PasswordHash != "" {
			add("username", "required with a password")
		}
		return errs
	}
	if strings.ContainsAny(a.Username, "\"\\\r\n") {
		add("username", "must not hold quotes, backslashes or line breaks")
	}
	for _, alg := range a.Algorithms {
		if alg != "SHA-256" && alg != "MD5" {
			add("algorithms", "%q is not SHA-256 or MD5", alg)
		}
	}
	if a.PasswordHash != "" && len(a.Algorithms) > 0 {
		add("algorithms", "set by password_hash (32 hex digits MD5, 64 SHA-256)")
	}
	if strings.ContainsAny(a.Realm, "\"\\\r\n") {
		add("realm", "must not hold quotes, backslashes or line breaks")
	}
	switch {
	case (a.Password == "") == (a.PasswordHash == ""):
		add("password", "set password or password_hash, one of them")
	case a.PasswordHash != "":
		if _, err := hex.DecodeString(string(a.PasswordHash)); err != nil || len(a.PasswordHash) != 32 && len(a.PasswordHash) != 64 {
			add("password_hash", "must be 32 (MD5) or 64 (SHA-256) hex digits")
		}
	}
	return errs
}

// authGate checks the digest credentials of INVITEs and limits each
// source's failures.
type authGate struct {
	key         [32]byte // the nonces' HMAC key, random per process
	maxFailures int
	log         *slog.Logger
	now         func() time.Time

	mu      sync.Mutex
	sources map[netip.Addr]*authWindowCount // guarded by mu: sources with failures in their window
	used    map[string]time.Time            // guarded by mu: accepted credentials (nonce, nc, cnonce), when

	failures atomic.Uint64 // wrong credentials
	refused  atomic.Uint64 // INVITEs refused unchallenged: their source past its failures
}

type authWindowCount struct {
	start    time.Time
	failures int
	refused  int
}

func newAuthGate(maxFailures int, log *slog.Logger) *authGate {
	g := &authGate{maxFailures: maxFailures, log: log, now: time.Now, sources: map[netip.Addr]*authWindowCount{},
		used: map[string]time.Time{}}
	rand.Read(g.key[:])
	return g
}

// nonce makes a nonce for src at now.
func (g *authGate) nonce(src netip.Addr, now time.Time) string {
	var b [8 + 16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(now.UnixNano()))
	copy(b[8:], g.mac(b[:8], src))
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func (g *authGate) mac(stamp []byte, src netip.Addr) []byte {
	m := hmac.New(sha256.New, g.key[:])
	m.Write(stamp)
	a := src.As16()
	m.Write(a[:])
	return m.Sum(nil)[:16]
}

// checkNonce reports whether n is one of ours for src, and whether it is
// past nonceLifetime.
func (g *authGate) checkNonce(n string, src netip.Addr, now time.Time) (ours, stale bool) {
	b, err := base64.RawURLEncoding.DecodeString(n)
	if err != nil || len(b) != 24 || !hmac.Equal(b[8:], g.mac(b[:8], src)) {
		return false, false
	}
	made := time.Unix(0, int64(binary.BigEndian.Uint64(b[:8])))
	return true, now.Sub(made) > nonceLifetime || made.After(now.Add(time.Second))
}

// errCredentialsFull is returned when maxUsedCredentials fresh
// credentials were accepted within nonceLifetime (503: try again later).
var errCredentialsFull = fmt.Errorf("%w: %d digest credentials in use", ingest.ErrAtCapacity, maxUsedCredentials)

// use records accepted creds; it reports errReplayed if they were used
// before, errCredentialsFull when no more can be kept.
func (g *authGate) use(creds *digest.Credentials, now time.Time) error {
	key := fmt.Sprintf("%s|%08x|%s", creds.Nonce, creds.Nc, creds.Cnonce)
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.used[key]; ok {
		return errReplayed
	}
	if len(g.used) >= maxUsedCredentials {
		for k, at := range g.used {
			if now.Sub(at) > nonceLifetime { // its nonce is stale too: made before at
				delete(g.used, k)
			}
		}
		if len(g.used) >= maxUsedCredentials {
			return errCredentialsFull
		}
	}
	g.used[key] = now
	return nil
}

var errReplayed = errors.New("sip: digest credentials replayed")

// blocked reports whether src is past its failures in its window.
func (g *authGate) blocked(src netip.Addr, now time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	w := g.sources[src]
	if w == nil || now.Sub(w.start) >= authWindow {
		return false
	}
	if w.failures < g.maxFailures {
		return false
	}
	w.refused++
	g.refused.Add(1)
	return true
}

// failed counts a failure of src and logs the first of its window and
// the one that blocks it.
func (g *authGate) failed(src netip.Addr, now time.Time, user, reason string) {
	g.failures.Add(1)
	g.mu.Lock()
	defer g.mu.Unlock()
	w := g.sources[src]
	if w == nil || now.Sub(w.start) >= authWindow {
		if w == nil && len(g.sources) >= maxTracked {
			for a, old := range g.sources {
				if now.Sub(old.start) >= authWindow {
					delete(g.sources, a)
				}
			}
			if len(g.sources) >= maxTracked {
				g.log.Warn("sip digest authentication failed", "remote_addr", src.String(), "route", user, "reason", reason, "untracked", true)
				return
			}
		}
		if w != nil && w.refused > 0 {
			g.log.Warn("sip source refused for failed authentication", "remote_addr", src.String(), "refused", w.refused, "window", authWindow.String())
		}
		w = &authWindowCount{start: now}
		g.sources[src] = w
	}
	w.failures++
	switch w.failures {
	case 1:
		g.log.Warn("sip digest authentication failed", "remote_addr", src.String(), "route", user, "reason", reason)
	case g.maxFailures:
		g.log.Warn("sip source failed authentication too often; refusing its calls for the rest of the window",
			"remote_addr", src.String(), "failures", w.failures, "window", authWindow.String(), "auth_max_failures", g.maxFailures)
	}
}

// authorize checks req's client certificate (a route with tls_client_ca,
// mtls.go) and credentials (a route with auth) for route r and, when they
// do not pass, answers it (401 with a challenge, or 403) and returns
// false. Both kinds of failure count against the source.
func (s *Server) authorize(req *sipmsg.Request, tx sipmsg.ServerTransaction, r *route, log *slog.Logger) bool {
	a := r.Auth
	if !a.on() && r.clientCAs.Load() == nil {
		return true
	}
	g, src, now := s.auth, source(req), s.auth.now()
	if g.blocked(src, now) {
		s.respond(req, tx, 403, "Forbidden")
		return false
	}
	if reason := s.clientAllowed(req, r); reason != "" {
		g.failed(src, now, r.User, reason)
		s.respond(req, tx, 403, "Forbidden")
		return false
	}
	if !a.on() {
		return true
	}
	h := req.GetHeader("Authorization")
	if h == nil {
		s.challenge(req, tx, a, src, now, false)
		return false
	}
	creds, err := digest.ParseCredentials(h.Value())
	if err != nil {
		g.failed(src, now, r.User, "malformed authorization")
		s.respond(req, tx, 403, "Forbidden")
		return false
	}
	ours, stale := g.checkNonce(creds.Nonce, src, now)
	switch {
	case !ours:
		g.failed(src, now, r.User, "nonce not ours")
		s.respond(req, tx, 403, "Forbidden")
		return false
	case stale:
		s.challenge(req, tx, a, src, now, true)
		return false
	}
	if reason := checkCredentials(a, creds); reason != "" {
		g.failed(src, now, r.User, reason)
		log.Info("sip call refused", "status", 403, "reason", reason)
		s.respond(req, tx, 403, "Forbidden")
		return false
	}
	switch err := g.use(creds, now); {
	case errors.Is(err, errReplayed):
		g.failed(src, now, r.User, "credentials replayed")
		log.Info("sip call refused", "status", 403, "reason", "credentials replayed")
		s.respond(req, tx, 403, "Forbidden")
		return false
	case err != nil:
		log.Warn("sip call refused", "status", 503, "error", err)
		s.respondErr(req, tx, err)
		return false
	}
	return true
}

// checkCredentials is why creds do not authenticate as a (for the log),
// or "".
func checkCredentials(a RouteAuth, creds *digest.Credentials) string {
	alg := strings.ToUpper(creds.Algorithm)
	if alg == "" {
		alg = "MD5"
	}
	offered := false
	for _, o := range a.algorithms() {
		offered = offered || o == alg
	}
	switch {
	case !offered:
		return fmt.Sprintf("algorithm %q not offered", creds.Algorithm)
	case creds.Userhash:
		return "userhash not offered"
	case !strings.EqualFold(creds.QOP, "auth"):
		return "qop must be auth"
	case creds.Realm != a.realm():
		return "wrong realm"
	case subtle.ConstantTimeCompare([]byte(creds.Username), []byte(a.Username)) != 1:
		return "wrong username or password"
	}
	want, err := digest.Digest(&digest.Challenge{Realm: a.realm(), Nonce: creds.Nonce, Algorithm: alg, QOP: []string{"auth"}},
		digest.Options{Method: "INVITE", URI: creds.URI, Username: a.Username, Password: string(a.Password),
			A1: strings.ToLower(string(a.PasswordHash)), Cnonce: creds.Cnonce, Count: creds.Nc})
	if err != nil {
		return "unusable credentials"
	}
	if subtle.ConstantTimeCompare([]byte(strings.ToLower(creds.Response)), []byte(want.Response)) != 1 {
		return "wrong username or password"
	}
	return ""
}

// challenge answers 401 with a fresh nonce for each algorithm offered.
func (s *Server) challenge(req *sipmsg.Request, tx sipmsg.ServerTransaction, a RouteAuth, src netip.Addr, now time.Time, stale bool) {
	if tx == nil {
		return
	}
	res := sipmsg.NewResponseFromRequest(req, 401, "Unauthorized", nil)
	for _, alg := range a.algorithms() {
		c := digest.Challenge{Realm: a.realm(), Nonce: s.auth.nonce(src, now), Algorithm: alg, QOP: []string{"auth"}, Stale: stale}
		res.AppendHeader(sipmsg.NewHeader("WWW-Authenticate", c.String()))
	}
	if err := tx.Respond(res); err != nil {
		s.log.Debug("sip respond failed", "status", 401, "error", err)
	}
}

// AuthTotals counts digest authentication failures (wrong credentials)
// and INVITEs refused unchallenged because their source failed too often.
func (s *Server) AuthTotals() (failures, refused uint64) {
	return s.auth.failures.Load(), s.auth.refused.Load()
}
