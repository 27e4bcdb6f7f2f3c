package e2e

import (
	"context"
	"testing"
	"time"
)

// sipAccountLimitConfig is a node with room for many calls whose accounts
// may each have one live session open (live.max_sessions_per_account).
const sipAccountLimitConfig = `
live:
  capacity: 8
  max_sessions_per_account: 1
  connect_timeout: 5m
sip:
  listen: 127.0.0.1:0
  rtp_ports: 31520-31539
  allow: [127.0.0.0/8]
  max_calls: 4
  routes:
    - user: transcribe
      account: acme
`

// TestSIPAccountLimit: an INVITE to a route whose account already has the
// live sessions live.max_sessions_per_account allows is refused 503 with
// Retry-After, as at the node's capacity, so a proxy in front of several
// nodes fails the call over (issue 43: 500 Server Internal Error, which a
// proxy does not fail over on). The limit's reason is in the log.
func TestSIPAccountLimit(t *testing.T) {
	d, addr := startSIPDaemon(t, sipAccountLimitConfig)
	key := createKey(t, d.DataDir, "acme")
	p := newPhone(t, addr)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	_, port := udpPair(t)
	offer := offerSDP([]int{port}, "0", "sendrecv", false)

	d.createLive(key, map[string]any{}) // the account's one session, not yet connected
	checkBusy(t, p.refusal(ctx, "transcribe", offer), "INVITE with the account's live sessions taken")
	d.WaitLog(10*time.Second, `"sip call not answered"`, `"status":503`, "live.max_sessions_per_account")
}
