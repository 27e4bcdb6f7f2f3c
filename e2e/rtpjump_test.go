package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	pionrtp "github.com/pion/rtp"
)

const rtpJumpConfig = `
sip:
  listen: 127.0.0.1:0
  rtp_ports: 31700-31779
  allow: [127.0.0.0/8]
  routes:
    - user: jump
      account: acme
      live: {custom_metadata: {call: jump}}
`

// rtpFillSlack is how far past a call's wall-clock time the silence the
// SIP door fills in may run (README, Limits and quotas).
const rtpFillSlack = time.Second

// TestSIPRTPJumpsNotSilence places a call whose RTP is 1-byte PCMU
// packets, every 2 ms, each timestamp 16000 samples (sip.jitter.max_gap,
// 2 s) past the last: the stored recording is at most the call's
// wall-clock time (and the second after the BYE the door still takes
// packets) plus the slack, plus the bytes sent, not 2 s a packet.
// Issue 43 finding 7: 4,420 such packets in 10 s made an 82-minute, 39 MB
// recording and a batch pass over it.
func TestSIPRTPJumpsNotSilence(t *testing.T) {
	d, addr := startSIPDaemon(t, rtpJumpConfig)
	key := createKey(t, d.DataDir, "acme")
	p := newPhone(t, addr)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	conn, port := udpPair(t)

	start := time.Now()
	dlg, code := p.call(ctx, "jump", "application/sdp", offerSDP([]int{port}, "0", "sendrecv", false))
	if code != 200 {
		t.Fatalf("INVITE answered %d", code)
	}
	callID := dlg.InviteRequest.CallID().Value()
	addrs, pts, _, _ := answered(t, dlg.InviteResponse.Body())
	if len(addrs) != 1 || pts[0] != 0 {
		t.Fatalf("answer %v pt %v, want one PCMU stream", addrs, pts)
	}
	const packets = 1500
	tick := time.NewTicker(2 * time.Millisecond)
	for i := range packets {
		<-tick.C
		pkt := pionrtp.Packet{Header: pionrtp.Header{Version: 2, PayloadType: 0, SequenceNumber: uint16(100 + i), Timestamp: uint32(i * 16000), SSRC: 0x4a4d50}, Payload: []byte{0x55}}
		b, err := pkt.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.WriteToUDP(b, addrs[0]); err != nil {
			t.Fatal(err)
		}
	}
	tick.Stop()
	if err := dlg.Bye(ctx); err != nil {
		t.Fatalf("bye: %v", err)
	}
	wall := time.Since(start)

	job := liveJobByCall(t, d, key, callID, 90*time.Second)
	if job["status"] != "done" {
		t.Fatalf("job %v: %v", job["status"], job["error_code"])
	}
	_, audio := storedAudio(t, d, key, job["id"].(string))
	file, _ := job["file"].(map[string]any)
	dur, _ := file["audio_duration"].(float64)
	// The door takes the packets the BYE overtook for up to 1 s after it.
	most := (wall + rtpFillSlack + time.Second).Seconds() + float64(packets)/8000
	t.Logf("%d packets in %s: audio_duration %.2f s, stored %d bytes (%.2f s)", packets, wall.Round(time.Millisecond), dur, len(audio), float64(len(audio))/8000)
	if dur > most || float64(len(audio))/8000 > most {
		t.Errorf("recording of %.1f s (%d bytes) from a %s call, want at most %.2f s (wall-clock time + 1 s + %s + the bytes sent)",
			dur, len(audio), wall.Round(time.Millisecond), most, rtpFillSlack)
	}
	if dur < 0.5 {
		t.Errorf("audio_duration %.2f s: the call's own bytes and time are missing", dur)
	}
	warn := d.WaitLog(10*time.Second, `"msg":"rtp timestamp jumps not filled"`)
	if want := fmt.Sprintf(`"call_id":%q`, callID); !containsAll(warn, []string{`"level":"WARN"`, want}) {
		t.Errorf("warning: %s", warn)
	}
}
