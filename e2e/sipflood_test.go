package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// floodInvite is an INVITE as a scanner sends it, unique per n.
func floodInvite(dst, src string, n int) []byte {
	return fmt.Appendf(nil, "INVITE sip:transcribe@%[1]s SIP/2.0\r\n"+
		"Via: SIP/2.0/UDP %[2]s;branch=z9hG4bK-flood-%[3]d;rport\r\n"+
		"Max-Forwards: 70\r\n"+
		"From: <sip:scanner@%[2]s>;tag=f%[3]d\r\n"+
		"To: <sip:transcribe@%[1]s>\r\n"+
		"Call-ID: flood-%[3]d@%[2]s\r\n"+
		"CSeq: 1 INVITE\r\n"+
		"Contact: <sip:scanner@%[2]s>\r\n"+
		"Content-Length: 0\r\n\r\n", dst, src, n)
}

var callIDRE = regexp.MustCompile(`(?i)\r\nCall-ID: *([^\r]+)\r\n`)

// TestSIPFlood: an address outside sip.allow floods the door with INVITEs
// over UDP and connections over TCP. It gets a few 403s and then silence;
// the daemon logs it once instead of once per INVITE, creates no job, and
// keeps serving an allowed PBX and the API while the flood runs.
func TestSIPFlood(t *testing.T) {
	const floods = 20000
	cfg := strings.Replace(fmt.Sprintf(sipConfig, "30s", "0s"), "allow: [127.0.0.0/8]", "allow: [127.0.0.1/32]", 1)
	d, addr := startSIPDaemon(t, cfg)
	key := createKey(t, d.DataDir, "acme")
	dst, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	scanner, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 2)})
	if err != nil {
		t.Skipf("cannot bind 127.0.0.2 for the unauthorised source: %v", err)
	}
	defer scanner.Close()

	// The scanner counts the INVITEs answered (by Call-ID: a 403 is
	// retransmitted until ACKed) until the door has been quiet for 3 s.
	answers := make(chan int, 1)
	go func() {
		calls := map[string]bool{}
		buf := make([]byte, 64<<10)
		for {
			scanner.SetReadDeadline(time.Now().Add(3 * time.Second))
			k, _, err := scanner.ReadFrom(buf)
			if err != nil {
				answers <- len(calls)
				return
			}
			if m := callIDRE.FindSubmatch(buf[:k]); m != nil && bytes.HasPrefix(buf[:k], []byte("SIP/2.0 ")) {
				calls[string(m[1])] = true
			}
		}
	}()
	var wg sync.WaitGroup
	wg.Go(func() {
		src := scanner.LocalAddr().String()
		for i := range floods {
			if _, err := scanner.WriteTo(floodInvite(addr, src, i), dst); err != nil {
				t.Errorf("flood datagram %d: %v", i, err)
				return
			}
		}
	})
	wg.Go(func() {
		for i := range 50 {
			c, err := (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}, Timeout: 5 * time.Second}).Dial("tcp", addr)
			if err != nil {
				continue // refused or reset under the flood: as good
			}
			c.SetDeadline(time.Now().Add(5 * time.Second))
			c.Write(floodInvite(addr, c.LocalAddr().String(), floods+i))
			io.Copy(io.Discard, c) // ends when the door closes the connection or answers and we time out
			c.Close()
		}
	})

	// Meanwhile the allowed PBX places a call and the API answers.
	p := newPhone(t, addr)
	ctx := t.Context()
	_, port := udpPair(t)
	dlg, code := p.call(ctx, "transcribe", "application/sdp", offerSDP([]int{port}, "0", "sendrecv", false))
	if code != 200 {
		t.Fatalf("allowed call during the flood answered %d, want 200", code)
	}
	if st, body := d.do("GET", "/healthz", "", nil, "", nil); st != 200 {
		t.Fatalf("/healthz during the flood: %d %s", st, body)
	}
	if err := dlg.Bye(ctx); err != nil {
		t.Fatalf("bye: %v", err)
	}
	wg.Wait()
	got := <-answers

	// The first INVITEs of the window (and TCP connections, from the same
	// allowance) were answered 403; everything after was dropped unread.
	if got < 1 || got > 8 {
		t.Errorf("the unauthorised source got %d of its %d INVITEs answered, want 1..8", got, floods)
	}
	if n := d.logCount("sip call refused", "127.0.0.2"); n > 8 {
		t.Errorf("%d 'sip call refused' log lines, want at most 8", n)
	}
	if n := d.logCount("dropping what it sends", "127.0.0.2"); n != 1 {
		t.Errorf("%d 'dropping' log lines for the flooding source, want 1", n)
	}
	var page struct {
		Items []struct {
			CustomMetadata map[string]any `json:"custom_metadata"`
		} `json:"items"`
	}
	if st, body := d.do("GET", "/v2/live?limit=100", key, nil, "", &page); st != 200 {
		t.Fatalf("list: %d %s", st, body)
	}
	if len(page.Items) != 1 {
		t.Fatalf("%d live jobs after the flood, want 1 (the allowed call)", len(page.Items))
	}
	liveJobByCall(t, d, key, dlg.InviteRequest.CallID().Value(), time.Minute)
	// The kernel may drop part of the flood before the door reads it.
	if n := d.metric("earshot_sip_refused_total"); n < floods/10 || n > floods+50 {
		t.Errorf("earshot_sip_refused_total = %v for %d datagrams and 50 connections", n, floods)
	}
}
