package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sipmsg "github.com/emiago/sipgo/sip"

	"github.com/earshot-dev/earshot/recognizer/recognizertest"
	"github.com/earshot-dev/earshot/store/postgres/pgtest"
)

// werKamailioPCMU bounds the WER of codecClip played by baresip in PCMU
// through Kamailio to nodes with the telephone model: measured 0.393 (both
// calls, 2026-11-24 20:55 UTC), the direct call's figure, so the bound is
// the direct call's, werBaresipPCMU, the measured value plus two words of
// the 28.
const werKamailioPCMU = werBaresipPCMU

// kamailioNodeConfig is a cluster node behind Kamailio: its SIP door admits
// only the Kamailio host, and it has room for one live session.
func kamailioNodeConfig(dsn, id, rtpPorts string) string {
	return clusterConfig(dsn, id) + `live:
  capacity: 1
  connect_timeout: 5m
sip:
  listen: 127.0.0.1:0
  rtp_ports: ` + rtpPorts + `
  max_calls: 4
  allow: [` + kamailioHost + `/32]
  routes:
    - user: transcribe
      account: acme
      live:
        language_config: {languages: [en]}
`
}

// answeredOn waits for the node of nodes that logs its n-th "sip call
// answered" line (n counted over all nodes) and returns it with the
// session id of that call.
func answeredOn(t *testing.T, nodes []*daemonProc, seen map[*daemonProc]int, timeout time.Duration) (*daemonProc, string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		for _, d := range nodes {
			lines := d.linesWith(`"msg":"sip call answered"`)
			if len(lines) > seen[d] {
				if len(lines) > seen[d]+1 {
					t.Fatalf("a node answered %d calls, want 1:\n%s", len(lines)-seen[d], strings.Join(lines[seen[d]:], "\n"))
				}
				var rec struct {
					SessionID string `json:"session_id"`
				}
				if err := json.Unmarshal([]byte(lines[len(lines)-1]), &rec); err != nil || rec.SessionID == "" {
					t.Fatalf("answered line %q: %v", lines[len(lines)-1], err)
				}
				seen[d]++
				return d, rec.SessionID
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no node answered a call within %s", timeout)
		}
		time.Sleep(100 * time.Millisecond) // polling real processes, not settling
	}
}

// TestClusterKamailio: a real Kamailio with the config `earshotd kamailio`
// prints spreads SIP calls over two earshotd nodes sharing a throwaway
// PostgreSQL. Both nodes admit only the Kamailio host (sip.allow) and are
// probed active with OPTIONS; a baresip call through Kamailio is
// transcribed on one node; with the other node full (its live capacity
// taken) the next call, sent there first by round-robin, is refused 503 and
// failed over to the node with room, and transcribed; a SIGKILLed node is
// taken out by the OPTIONS probes, and a SIPREC recording session through
// Kamailio then goes straight to the survivor, its BYE through Kamailio;
// with every node left full, Kamailio answers 503 with Retry-After.
func TestClusterKamailio(t *testing.T) {
	dsn := pgtest.StartDatabase(t)
	a, addrA := startSIPDaemon(t, telephoneModel(t)+kamailioNodeConfig(dsn, "node-a", "31510-31529"))
	b, addrB := startSIPDaemon(t, telephoneModel(t)+kamailioNodeConfig(dsn, "node-b", "31530-31549"))
	nodes := []*daemonProc{a, b}
	uriOf := map[*daemonProc]string{a: "sip:" + addrA, b: "sip:" + addrB}
	key := createClusterKey(t, a, "acme")

	k := startKamailio(t, []string{addrA, addrB}, time.Second)
	// The probes from the Kamailio host are admitted and answered 200.
	k.waitNodes(30*time.Second, map[string]string{uriOf[a]: "AP", uriOf[b]: "AP"})

	wav16, ref := clip(t, codecClip)
	wav8 := narrowband(t, wav16)
	seen := map[*daemonProc]int{}
	// call places a baresip call through Kamailio and returns the node that
	// transcribed it, after checking the transcript.
	call := func(what string) *daemonProc {
		t.Helper()
		// The phone's SDP names the host's interface address and its RTP
		// comes from 127.0.0.1, and the INVITE's source is Kamailio: the
		// node latches onto the RTP's source (sip.rtp_latching).
		baresip(t, "sip:transcribe@"+k.Addr, "PCMU/8000/1", wav8, 8000, 16*time.Second, "net_interface "+hostAddr(t))
		d, id := answeredOn(t, nodes, seen, 30*time.Second)
		job := d.waitLive(key, id, 90*time.Second)
		if job["status"] != "done" {
			t.Fatalf("%s: job %s on %s is %v", what, id, uriOf[d], job["status"])
		}
		// The record is done before the session lets go of its capacity.
		d.WaitLog(10*time.Second, `"sip call ended"`, id)
		d.WaitLog(time.Second, `"msg":"rtp source latched"`, `"actual":"127.0.0.1:`)
		got := fullTranscript(job)
		wer := recognizertest.WER(ref, got)
		t.Logf("%s: on %s, WER %.3f %q", what, uriOf[d], wer, got)
		if wer > werKamailioPCMU {
			t.Errorf("%s: WER %.3f > %.3f; the node's call:\n%s", what, wer, werKamailioPCMU, strings.Join(d.linesWith(`"msg":"sip call`), "\n"))
		}
		// Any node reads it from the shared store.
		for _, o := range nodes {
			if status, body := o.do("GET", "/v2/live/"+id, key, nil, "", nil); status != 200 {
				t.Errorf("%s: GET /v2/live/%s on %s: %d %s", what, id, uriOf[o], status, body)
			}
		}
		return d
	}

	first := call("first call")
	k.WaitLog(10*time.Second, "earshot: INVITE", "to node "+uriOf[first])

	// Round-robin sends the next call to the other node: fill it first.
	full := a
	if first == a {
		full = b
	}
	s := full.createLive(key, map[string]any{})
	if u, err := url.Parse(s.URL); err != nil || "http://"+u.Host != full.Base {
		t.Fatalf("the session filling %s was placed at %s, not on it", uriOf[full], s.URL)
	}
	second := call("failed-over call")
	if second != first {
		t.Errorf("the failed-over call was answered on %s, want %s (the node with room)", uriOf[second], uriOf[first])
	}
	k.WaitLog(10*time.Second, "earshot: node "+uriOf[full]+" answered 503")
	k.WaitLog(10*time.Second, "failed over to node "+uriOf[first])
	full.WaitLog(10*time.Second, `"sip call not answered"`, `"status":503`)

	// A node SIGKILLed is taken out by the probes; the next call goes
	// straight to the survivor.
	full.Kill()
	k.WaitLog(30*time.Second, "earshot: node "+uriOf[full]+" is down")
	k.waitNodes(10*time.Second, map[string]string{uriOf[first]: "AP", uriOf[full]: "IP"})

	p := newPhone(t, k.Addr)
	p.tcp = true // the multipart INVITE is larger than a UDP datagram may be
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	ch0, _ := g711(t, "pocketsphinx-goforward.wav", "mulaw")
	connA, portA := udpPair(t)
	connB, portB := udpPair(t)
	body := siprecBody(offerSDP([]int{portA, portB}, "0 101", "sendonly", true))
	dlg, code := p.call(ctx, "transcribe", "multipart/mixed;boundary=b0undary", []byte(body), sipmsg.NewHeader("Require", "siprec"))
	if code != 200 {
		t.Fatalf("SIPREC INVITE through Kamailio answered %d", code)
	}
	callID := dlg.InviteRequest.CallID().Value()
	addrs, _, _, _ := answered(t, dlg.InviteResponse.Body())
	if len(addrs) != 2 {
		t.Fatalf("SIPREC answer has %d streams", len(addrs))
	}
	done := make(chan struct{})
	go func() { defer close(done); sendRTP(t, connB, addrs[1], 0, ch0, 8, impair{}, 0xB) }()
	sendRTP(t, connA, addrs[0], 0, ch0, 8, impair{}, 0xA)
	<-done
	if err := dlg.Bye(ctx); err != nil {
		t.Fatalf("BYE through Kamailio: %v", err)
	}
	job := liveJobByCall(t, first, key, callID, 90*time.Second)
	if job["status"] != "done" {
		t.Fatalf("SIPREC job %v", job["status"])
	}
	first.WaitLog(10*time.Second, `"sip call ended"`, `"reason":"sip: remote hung up"`)
	k.WaitLog(10*time.Second, "earshot: INVITE "+callID+" to node "+uriOf[first])
	if lines := k.linesWith("answered 503 to INVITE " + callID); len(lines) > 0 {
		t.Errorf("the SIPREC call was tried on a node taken out: %q", lines)
	}
	md, _ := json.Marshal(job["custom_metadata"])
	if !strings.Contains(string(md), `"siprec_session_id":"ab30317f1a784dc48ff824d0d3715d86`) {
		t.Errorf("SIPREC metadata lost through Kamailio: %s", md)
	}
	if chans, _ := storedAudio(t, first, key, job["id"].(string)); chans != 2 {
		t.Errorf("SIPREC recording has %d channels, want 2", chans)
	}

	// Every node left full: Kamailio itself answers 503 with Retry-After
	// (the node's 503 would reach the caller as 500).
	first.createLive(key, map[string]any{})
	q := newPhone(t, k.Addr)
	_, port := udpPair(t)
	res := q.refusal(ctx, "transcribe", offerSDP([]int{port}, "0", "sendrecv", false))
	checkBusy(t, res, "INVITE through Kamailio with every node full")
	if !strings.Contains(res.Reason, "No earshot node available") {
		t.Errorf("all full: answered %d %q, want Kamailio's own 503", res.StatusCode, res.Reason)
	}
	k.WaitLog(10*time.Second, "earshot: no other node for INVITE")
}

// TestKamailioSilentNode: a node that takes INVITEs and never answers (a
// socket that reads and ignores them, not yet probed: probes every hour)
// is skipped after Kamailio's timeout and marked inactive, and the call is
// answered by the next node; of two calls, round-robin sends one to the
// silent node first.
func TestKamailioSilentNode(t *testing.T) {
	d, addr := startSIPDaemon(t, `
sip:
  listen: 127.0.0.1:0
  rtp_ports: 31550-31569
  max_calls: 4
  allow: [`+kamailioHost+`/32]
  routes:
    - user: transcribe
      account: acme
`)
	key := createKey(t, d.DataDir, "acme")
	silent, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { silent.Close() })
	go func() {
		buf := make([]byte, 65536)
		for {
			if _, _, err := silent.ReadFrom(buf); err != nil {
				return
			}
		}
	}()
	silentURI := "sip:" + silent.LocalAddr().String()
	k := startKamailio(t, []string{silent.LocalAddr().String(), addr}, time.Hour)
	// Active, not probed yet (AX).
	k.waitNodes(10*time.Second, map[string]string{silentURI: "AX", "sip:" + addr: "AX"})

	p := newPhone(t, k.Addr)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	_, port := udpPair(t)
	for range 2 {
		dlg, code := p.call(ctx, "transcribe", "application/sdp", offerSDP([]int{port}, "0", "sendrecv", false))
		if code != 200 {
			t.Fatalf("INVITE through Kamailio answered %d", code)
		}
		if err := dlg.Bye(ctx); err != nil {
			t.Fatalf("BYE through Kamailio: %v", err)
		}
		liveJobByCall(t, d, key, dlg.InviteRequest.CallID().Value(), time.Minute)
	}
	k.WaitLog(5*time.Second, "earshot: node "+silentURI+" did not answer INVITE")
	k.WaitLog(5*time.Second, "earshot: node "+silentURI+" is down; taken out")
	k.waitNodes(5*time.Second, map[string]string{silentURI: "IP", "sip:" + addr: "AX"})
}

// kamailioTLSNodeConfig is a cluster node behind a Kamailio speaking TLS:
// its door takes SIP over TLS (certificate and key filled in by fillTLS)
// from the Kamailio host only, and its route requires SRTP without the lab
// flag allow_sdes_without_tls, so an answered call proves the SDES keys
// reached it inside TLS. The route pins Kamailio by its client
// certificate (tls_client_ca, tls_client_names).
func kamailioTLSNodeConfig(dsn, id, rtpPorts, kamailioCA string) string {
	return clusterConfig(dsn, id) + `live:
  capacity: 1
  connect_timeout: 5m
sip:
  listen: 127.0.0.1:0
  tls_listen: 127.0.0.1:0
  tls_cert: %s
  tls_key: %s
  rtp_ports: ` + rtpPorts + `
  max_calls: 4
  allow: [` + kamailioHost + `/32]
  routes:
    - user: transcribe
      account: acme
      srtp: mandatory
      tls_client_ca: ` + kamailioCA + `
      tls_client_names: [kamailio.example]
      live:
        language_config: {languages: [en]}
`
}

// TestClusterKamailioTLS: a real Kamailio with TLS on (`earshotd kamailio
// config --tls-*`) in front of two earshotd nodes that take SIP only over
// TLS from it (pinned by its client certificate) and require SRTP. Both
// nodes are probed active over TLS; a baresip call over SIP/TLS to
// Kamailio with SDES-SRTP (mediaenc=srtp-mand) is relayed over TLS to a
// node, answered with SRTP (the node logs the suite and TLS), its media
// decrypted and transcribed within the plain calls' bound.
func TestClusterKamailioTLS(t *testing.T) {
	dsn := pgtest.StartDatabase(t)
	dir := t.TempDir()
	kCert, kKey := testCertFor(t, dir, "kamailio.example", time.Now().Add(24*time.Hour), kamailioHost)
	type node struct {
		d        *daemonProc
		uri      string
		certFile string
	}
	var nodes []node
	var caPEM []byte
	for i, ports := range []string{"31570-31589", "31590-31609"} {
		certFile, keyFile := testCert(t, dir, fmt.Sprintf("node-%d", i), time.Now().Add(24*time.Hour))
		d, _ := startSIPDaemon(t, telephoneModel(t)+fillTLS(kamailioTLSNodeConfig(dsn, fmt.Sprintf("node-%d", i), ports, kCert), certFile, keyFile))
		m := sipTLSAddrRE.FindStringSubmatch(d.WaitLog(5*time.Second, "sip listening"))
		if m == nil {
			t.Fatal("no tls_addr in the sip listening line")
		}
		nodes = append(nodes, node{d, "sip:" + m[1] + ";transport=tls", certFile})
		caPEM = append(caPEM, mustRead(t, certFile)...)
	}
	caFile := filepath.Join(dir, "nodes-ca.pem")
	if err := os.WriteFile(caFile, caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	key := createClusterKey(t, nodes[0].d, "acme")
	k := startKamailioTLS(t, []string{nodes[0].uri, nodes[1].uri}, time.Second, &kamailioTLS{cert: kCert, key: kKey, ca: caFile})
	// The OPTIONS probes over TLS, from Kamailio's pinned certificate, are
	// answered 200 by both nodes.
	k.waitNodes(30*time.Second, map[string]string{nodes[0].uri: "AP", nodes[1].uri: "AP"})

	wav16, ref := clip(t, codecClip)
	wav8 := narrowband(t, wav16)
	baresipSRTP(t, "sip:transcribe@"+k.TLSAddr+";transport=tls", "PCMU/8000/1", "srtp-mand", wav8, 8000, 16*time.Second, true,
		"sip_cafile "+kCert, "net_interface "+hostAddr(t))
	ds := []*daemonProc{nodes[0].d, nodes[1].d}
	d, id := answeredOn(t, ds, map[*daemonProc]int{}, 30*time.Second)
	d.WaitLog(5*time.Second, `"msg":"sip call answered"`, `"srtp":"AES_CM_128_HMAC_SHA1_80"`, `"transport":"TLS"`)
	k.WaitLog(10*time.Second, "earshot: INVITE", ";transport=tls")
	job := d.waitLive(key, id, 90*time.Second)
	if job["status"] != "done" {
		t.Fatalf("job %s is %v", id, job["status"])
	}
	got := fullTranscript(job)
	wer := recognizertest.WER(ref, got)
	t.Logf("baresip over TLS + SRTP through Kamailio (TLS to the node): WER %.3f %q", wer, got)
	if wer > werKamailioPCMU {
		t.Errorf("WER %.3f > %.3f; the node's call:\n%s", wer, werKamailioPCMU, strings.Join(d.linesWith(`"msg":"sip call`), "\n"))
	}
}
