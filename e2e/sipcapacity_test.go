package e2e

import (
	"context"
	"syscall"
	"testing"
	"time"

	sipmsg "github.com/emiago/sipgo/sip"
)

// sipCapacityConfig is a node with room for one call: one live session
// (live.capacity) and one call on the door (sip.max_calls).
const sipCapacityConfig = `
live:
  capacity: 1
  connect_timeout: 5m
sip:
  listen: 127.0.0.1:0
  rtp_ports: 31500-31509
  allow: [127.0.0.0/8]
  max_calls: 1
  routes:
    - user: transcribe
      account: acme
`

// checkBusy checks a 503 refusal with Retry-After.
func checkBusy(t *testing.T, res *sipmsg.Response, what string) {
	t.Helper()
	if res.StatusCode != 503 {
		t.Errorf("%s: answered %d %s, want 503", what, res.StatusCode, res.Reason)
	}
	if h := res.GetHeader("Retry-After"); h == nil || h.Value() != "5" {
		t.Errorf("%s: Retry-After %v, want 5", what, h)
	}
}

// TestSIPAtCapacity: a node with no room answers an INVITE 503 with
// Retry-After, the answer a proxy in front of several nodes (Kamailio)
// fails the call over on, whether the daemon's live capacity is taken (503
// without Retry-After before) or the door's sip.max_calls is reached (486
// before); OPTIONS (a proxy's probe) is answered 200 all the while, since
// the node is up, and 503 with Retry-After once it is shutting down (200
// before), so the proxy takes it out while its calls hang up.
func TestSIPAtCapacity(t *testing.T) {
	d, addr := startSIPDaemon(t, sipCapacityConfig)
	key := createKey(t, d.DataDir, "acme")
	gate := make(chan struct{})
	p := newGatedPhone(t, addr, gate)
	defer close(gate)
	probe := newPhone(t, addr) // its own socket: p's stays blocked on a held BYE
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	_, port := udpPair(t)
	offer := offerSDP([]int{port}, "0", "sendrecv", false)
	options := func(what string) *sipmsg.Response {
		t.Helper()
		res, err := probe.cli.Do(ctx, sipmsg.NewRequest(sipmsg.OPTIONS, probe.uri("")))
		if err != nil {
			t.Fatalf("OPTIONS %s: %v", what, err)
		}
		return res
	}

	// The live capacity taken by a WebSocket session not yet connected.
	s := d.createLive(key, map[string]any{})
	checkBusy(t, p.refusal(ctx, "transcribe", offer), "INVITE with live capacity taken")
	d.WaitLog(10*time.Second, `"sip call not answered"`, `"status":503`, "capacity 1")
	if res := options("with the live capacity taken"); res.StatusCode != 200 {
		t.Errorf("OPTIONS with the live capacity taken: %d, want 200", res.StatusCode)
	}
	if _, code := runSession(t, s.URL, nil, 32, 0); code != 1000 {
		t.Fatalf("ending the session that took the capacity: close %d", code)
	}
	d.WaitLog(10*time.Second, `"live session ended"`, s.ID)

	// The door full: one call up (no RTP yet), a second INVITE.
	dlg, code := p.call(ctx, "transcribe", "application/sdp", offer)
	if code != 200 {
		t.Fatalf("first call answered %d", code)
	}
	checkBusy(t, p.refusal(ctx, "transcribe", offer), "INVITE with sip.max_calls reached")
	d.WaitLog(10*time.Second, `"sip call refused"`, `"status":503`, "max_calls 1")
	if res := options("with the door full"); res.StatusCode != 200 {
		t.Errorf("OPTIONS with the door full: %d, want 200", res.StatusCode)
	}

	// Shutting down with that call up: the daemon hangs it up (the phone
	// holds its answer to the BYE) and answers probes 503 meanwhile.
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-p.byes:
		if id != dlg.InviteRequest.CallID().Value() {
			t.Fatalf("BYE for %s, want the call's", id)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no BYE within 30s of SIGTERM")
	}
	checkBusy(t, options("while shutting down"), "OPTIONS while shutting down")
}
