package e2e

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The receiver's check of x-earshot-webhook-signature exactly as
// docs/PROTOCOL.md (Callbacks) prints it, between the markers; the tests
// of this package verify real deliveries with it, and
// TestCallbackVerifierDocumented keeps the page's copy the same.

// verifier:begin
// verifyCallback checks x-earshot-webhook-signature ("t=<unix>,v1=<hex>")
// against the raw body and the account's callback secret
// (`earshotd keys secret`), refusing a delivery signed more than maxAge ago.
func verifyCallback(secret []byte, header string, body []byte, maxAge time.Duration) error {
	var ts string
	var sigs []string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sigs = append(sigs, v)
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return errors.New("no timestamp")
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(ts + "."))
	mac.Write(body)
	want := hex.EncodeToString(mac.Sum(nil))
	for _, sig := range sigs {
		if hmac.Equal([]byte(sig), []byte(want)) {
			if age := time.Since(time.Unix(sec, 0)); age > maxAge || age < -maxAge {
				return errors.New("too old: a replay")
			}
			return nil
		}
	}
	return errors.New("bad signature")
}

// verifier:end

// TestCallbackVerifierDocumented: docs/PROTOCOL.md shows verifyCallback as
// it is here, so the verifier the tests prove is the one receivers copy.
func TestCallbackVerifierDocumented(t *testing.T) {
	src, err := os.ReadFile("callbacksig_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, code, _ := strings.Cut(string(src), "// verifier:begin\n")
	code, _, _ = strings.Cut(code, "\n// verifier:end")
	doc, err := os.ReadFile("../docs/PROTOCOL.md")
	if err != nil {
		t.Fatal(err)
	}
	if code == "" || !strings.Contains(string(doc), "```go\n"+code+"```\n") {
		t.Errorf("docs/PROTOCOL.md does not show verifyCallback as e2e/callbacksig_test.go has it:\n%s", code)
	}
}

// checkReplay: the timed signature of a real delivery verifies with the
// documented verifier, and the same delivery sent again later is refused:
// kept as it was, once older than the receiver's maxAge (1 s here, so the
// test waits about two seconds); with its timestamp moved on, at once.
func checkReplay(t *testing.T, secret []byte, h callbackHit) {
	t.Helper()
	if err := verifyCallback(secret, h.timed, h.body, 5*time.Minute); err != nil {
		t.Fatalf("x-earshot-webhook-signature %q: %v", h.timed, err)
	}
	ts, sig, _ := strings.Cut(h.timed, ",")
	sec, _ := strconv.ParseInt(strings.TrimPrefix(ts, "t="), 10, 64)
	moved := "t=" + strconv.FormatInt(sec+60, 10) + "," + sig
	if err := verifyCallback(secret, moved, h.body, 5*time.Minute); err == nil {
		t.Errorf("replay with its timestamp moved a minute on (%q) verified", moved)
	}
	deadline := time.Now().Add(5 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for verifyCallback(secret, h.timed, h.body, time.Second) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("delivery signed %q still verifies with maxAge 1s after 5s", h.timed)
		}
		<-tick.C
	}
}
