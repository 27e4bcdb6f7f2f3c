package sip

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/icholy/digest"

	"github.com/earshot-dev/earshot/config"
	"github.com/earshot-dev/earshot/ingest"
)

// TestNonce: a nonce is good from the address it was made for, until
// nonceLifetime; then stale; from another address, or altered, not ours.
func TestNonce(t *testing.T) {
	g := newAuthGate(3, slog.New(slog.DiscardHandler))
	src, other := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")
	now := time.Now()
	n := g.nonce(src, now)
	if n == g.nonce(src, now.Add(time.Nanosecond)) {
		t.Error("two nonces alike")
	}
	for _, c := range []struct {
		name        string
		nonce       string
		src         netip.Addr
		at          time.Time
		ours, stale bool
	}{
		{"fresh", n, src, now.Add(time.Minute), true, false},
		{"old", n, src, now.Add(nonceLifetime + time.Second), true, true},
		{"another source", n, other, now, false, false},
		{"altered", n[:len(n)-2] + "AA", src, now, false, false},
		{"garbage", "x", src, now, false, false},
	} {
		if ours, stale := g.checkNonce(c.nonce, c.src, c.at); ours != c.ours || stale != c.stale {
			t.Errorf("%s: ours %t stale %t, want %t %t", c.name, ours, stale, c.ours, c.stale)
		}
	}
}

// TestCheckCredentials: responses a client computes from the challenge,
// with the password or against a password_hash, in MD5 and SHA-256.
func TestCheckCredentials(t *testing.T) {
	ha1 := func(h func([]byte) []byte) string { return hex.EncodeToString(h([]byte("phone:earshot:s3cret"))) }
	md5HA1 := ha1(func(b []byte) []byte { s := md5.Sum(b); return s[:] })
	shaHA1 := ha1(func(b []byte) []byte { s := sha256.Sum256(b); return s[:] })
	clear := RouteAuth{Username: "phone", Password: "s3cret"}
	for _, c := range []struct {
		name     string
		auth     RouteAuth
		alg      string
		user, pw string
		ok       bool
	}{
		{"md5", clear, "MD5", "phone", "s3cret", true},
		{"sha-256", clear, "SHA-256", "phone", "s3cret", true},
		{"wrong password", clear, "SHA-256", "phone", "guess", false},
		{"wrong user", clear, "MD5", "admin", "s3cret", false},
		{"md5 hash", RouteAuth{Username: "phone", PasswordHash: configSecret("00" + md5HA1[2:])}, "MD5", "phone", "s3cret", false},
		{"md5 hash right", RouteAuth{Username: "phone", PasswordHash: configSecret(md5HA1)}, "MD5", "phone", "s3cret", true},
		{"sha hash", RouteAuth{Username: "phone", PasswordHash: configSecret(shaHA1)}, "SHA-256", "phone", "s3cret", true},
		{"sha hash, md5 not offered", RouteAuth{Username: "phone", PasswordHash: configSecret(shaHA1)}, "MD5", "phone", "s3cret", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			chal := &digest.Challenge{Realm: "earshot", Nonce: "n0nce", Algorithm: c.alg, QOP: []string{"auth"}}
			creds, err := digest.Digest(chal, digest.Options{Method: "INVITE", URI: "sip:secure@127.0.0.1", Username: c.user, Password: c.pw})
			if err != nil {
				t.Fatal(err)
			}
			if reason := checkCredentials(c.auth, creds); (reason == "") != c.ok {
				t.Errorf("checkCredentials = %q, want ok %t", reason, c.ok)
			}
		})
	}
}

func configSecret(s string) config.Secret { return config.Secret(s) }

// TestAuthFailuresBlockSource: a source is refused after max failures in
// its window, others are not, and the window's end lets it try again.
func TestAuthFailuresBlockSource(t *testing.T) {
	g := newAuthGate(3, slog.New(slog.DiscardHandler))
	src, other := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")
	now := time.Now()
	for range 3 {
		if g.blocked(src, now) {
			t.Fatal("blocked before its failures")
		}
		g.failed(src, now, "secure", "wrong username or password")
	}
	if !g.blocked(src, now) || g.blocked(other, now) {
		t.Errorf("after 3 failures: src blocked %t (want true), other %t (want false)", g.blocked(src, now), g.blocked(other, now))
	}
	if g.blocked(src, now.Add(authWindow)) {
		t.Error("still blocked after the window")
	}
	if f, r := g.failures.Load(), g.refused.Load(); f != 3 || r != 1 {
		t.Errorf("failures %d refused %d, want 3 and 1", f, r)
	}
}

// TestCredentialsOnce: accepted credentials are good once (a captured
// INVITE sent again is a replay); the next nonce count is fresh; the
// kept set is bounded, and emptied of credentials whose nonce is stale.
func TestCredentialsOnce(t *testing.T) {
	g := newAuthGate(3, slog.New(slog.DiscardHandler))
	now := time.Now()
	c := &digest.Credentials{Nonce: "n", Nc: 1, Cnonce: "c"}
	if err := g.use(c, now); err != nil {
		t.Fatalf("first use: %v", err)
	}
	if err := g.use(c, now); !errors.Is(err, errReplayed) {
		t.Errorf("second use = %v, want errReplayed", err)
	}
	if err := g.use(&digest.Credentials{Nonce: "n", Nc: 2, Cnonce: "c"}, now); err != nil {
		t.Errorf("next nonce count: %v", err)
	}
	for i := len(g.used); i < maxUsedCredentials; i++ {
		g.used[strconv.Itoa(i)] = now
	}
	if err := g.use(&digest.Credentials{Nonce: "m", Nc: 1}, now); !errors.Is(err, ingest.ErrAtCapacity) {
		t.Errorf("use with %d kept = %v, want ErrAtCapacity", len(g.used), err)
	}
	if err := g.use(&digest.Credentials{Nonce: "m", Nc: 1}, now.Add(nonceLifetime+time.Second)); err != nil || len(g.used) != 1 {
		t.Errorf("use once the kept nonces are stale = %v with %d kept, want nil and 1", err, len(g.used))
	}
}
