package e2e

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/emiago/sipgo"
	sipmsg "github.com/emiago/sipgo/sip"
	pionrtp "github.com/pion/rtp"
	"github.com/pion/sdp/v3"

	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// Bounds of the WER of calls through the SIP door: the value measured now
// plus two words of the clip (one of the four of "go forward ten meters"),
// re-derived when the engine changes. TestSIPCall's calls decode on the
// telephone model, as an installed appliance's do (telephoneModel);
// measured 2026-11-29 06:02 UTC (go test ./e2e -run 'TestSIPCall$', three
// runs, the same in all, on the shared 2-CPU box at load average 20):
// 0.286 (8 errors of 28 words) on the LibriSpeech clip, 0.429 (12 of 28)
// with injected loss, 0 on "go forward ten meters". The bounds: 10 of 28,
// 14 of 28, 1 of 4. Before, TestSIPCall decoded on the wideband model
// (0.679-0.714 on the LibriSpeech clip, 0.25 on "go forward", 05:21-05:47
// UTC) and the LibriSpeech bound was 0.75 for both calls.
//
// werSIPAny bounds the SIPREC tests' short clips on the wideband model (no
// telephone model configured there): 0.24 on the callee's LibriSpeech clip
// (2026-11-21), two of four words of "go forward ten meters".
const (
	werSIPLS   = 10.0 / 28 // ls-test-clean-1089-134686-0000 at 8 kHz
	werSIPLoss = 14.0 / 28 // the same with 2 % loss, reordering, duplicates
	werSIPGo   = 1.0 / 4   // pocketsphinx-goforward at 8 kHz
	werSIPAny  = 0.5       // the SIPREC tests' clips
)

const sipConfig = `
sip:
  listen: 127.0.0.1:0
  rtp_ports: 31000-31399
  allow: [127.0.0.0/8]
  rtp_timeout: %s
  ring_time: %s
  headers: [X-Customer-Id]
  routes:
    - user: transcribe
      account: acme
      live:
        language_config: {languages: [en]}
        custom_metadata: {door: sip}
`

// sipAddrRE finds the door's bound address in its "sip listening" line.
var sipAddrRE = regexp.MustCompile(`"addr":"([0-9.]+:[0-9]+)"`)

func startSIPDaemon(t *testing.T, cfg string) (*daemonProc, string) {
	t.Helper()
	d := startDaemon(t, "", cfg)
	line := d.WaitLog(20*time.Second, "sip listening")
	m := sipAddrRE.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("no addr in %s", line)
	}
	return d, m[1]
}

// g711 converts a clip to 8 kHz G.711 (law "mulaw" or "alaw") with ffmpeg.
func g711(t *testing.T, file, law string) ([]byte, string) {
	t.Helper()
	path, ref := clip(t, file)
	out := filepath.Join(t.TempDir(), "audio."+law)
	if b, err := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-i", path, "-ar", "8000", "-ac", "1", "-f", law, out).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v %s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b, ref
}

// reinvite sends an in-dialog offer and ACKs its answer.
func reinvite(t *testing.T, ctx context.Context, dlg *sipgo.DialogClientSession, body []byte) *sipmsg.Response {
	t.Helper()
	req := sipmsg.NewRequest(sipmsg.INVITE, dlg.InviteResponse.Contact().Address)
	req.AppendHeader(sipmsg.NewHeader("Content-Type", "application/sdp"))
	req.SetBody(body)
	res, err := dlg.Do(ctx, req)
	if err != nil {
		t.Fatalf("re-invite: %v", err)
	}
	if res.StatusCode == 200 {
		ack := sipmsg.NewRequest(sipmsg.ACK, dlg.InviteResponse.Contact().Address)
		if err := dlg.WriteRequest(ack); err != nil {
			t.Fatalf("ack re-invite: %v", err)
		}
	}
	return res
}

// offerSDP offers one audio stream per port with the given formats
// (e.g. "0 8 101"), labelled 1, 2... when labels is set.
func offerSDP(ports []int, formats, dir string, labels bool) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "v=0\r\no=phone 1 1 IN IP4 127.0.0.1\r\ns=call\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n")
	for i, port := range ports {
		fmt.Fprintf(&b, "m=audio %d RTP/AVP %s\r\n", port, formats)
		for _, f := range strings.Fields(formats) {
			switch f {
			case "0":
				b.WriteString("a=rtpmap:0 PCMU/8000\r\n")
			case "8":
				b.WriteString("a=rtpmap:8 PCMA/8000\r\n")
			case "18":
				b.WriteString("a=rtpmap:18 G729/8000\r\n")
			case "111":
				b.WriteString("a=rtpmap:111 opus/48000/2\r\n")
			case "101":
				b.WriteString("a=rtpmap:101 telephone-event/8000\r\na=fmtp:101 0-16\r\n")
			}
		}
		b.WriteString("a=ptime:20\r\na=" + dir + "\r\n")
		if labels {
			fmt.Fprintf(&b, "a=label:%d\r\n", i+1)
		}
	}
	return []byte(b.String())
}

// answered parses the daemon's answer: the RTP address and payload type of
// each stream, and the direction of the first.
func answered(t *testing.T, body []byte) ([]*net.UDPAddr, []uint8, string, string) {
	t.Helper()
	var sd sdp.SessionDescription
	if err := sd.Unmarshal(body); err != nil {
		t.Fatalf("answer SDP: %v\n%s", err, body)
	}
	var addrs []*net.UDPAddr
	var pts []uint8
	dir, formats := "", ""
	for _, m := range sd.MediaDescriptions {
		addrs = append(addrs, &net.UDPAddr{IP: net.ParseIP(sd.ConnectionInformation.Address.Address), Port: m.MediaName.Port.Value})
		var pt int
		fmt.Sscan(m.MediaName.Formats[0], &pt)
		pts = append(pts, uint8(pt))
		if dir == "" {
			for _, a := range m.Attributes {
				if a.Key == "recvonly" || a.Key == "inactive" || a.Key == "sendrecv" || a.Key == "sendonly" {
					dir = a.Key
				}
			}
			formats = strings.Join(m.MediaName.Formats, " ")
		}
	}
	return addrs, pts, dir, formats
}

// impair says what the sender does to packet i: drop, swap with the next,
// send twice.
type impair struct{ drop, swap, dup int }

// sendRTP streams audio as 20 ms packets of pt from conn to dst, speedup
// times real time, with the impairments asked for.
func sendRTP(t *testing.T, conn *net.UDPConn, dst *net.UDPAddr, pt uint8, audio []byte, speedup int, imp impair, ssrc uint32) {
	t.Helper()
	var pkts [][]byte
	for i, seq := 0, uint16(1000); i < len(audio); i, seq = i+160, seq+1 {
		p := pionrtp.Packet{Header: pionrtp.Header{Version: 2, PayloadType: pt, SequenceNumber: seq, Timestamp: uint32(5000 + i), SSRC: ssrc}, Payload: audio[i:min(i+160, len(audio))]}
		b, err := p.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		pkts = append(pkts, b)
	}
	tick := time.NewTicker(20 * time.Millisecond / time.Duration(speedup))
	defer tick.Stop()
	for _, tickSend := range imp.order(len(pkts)) {
		<-tick.C
		for _, i := range tickSend {
			conn.WriteToUDP(pkts[i], dst)
		}
	}
}

// order is what sendRTP sends of n packets at each 20 ms tick: every
// drop-th packet left out (never the last), every swap-th sent after its
// successor, every dup-th sent twice.
func (imp impair) order(n int) [][]int {
	var out [][]int
	for i := 0; i < n; i++ {
		switch {
		case imp.drop > 0 && i%imp.drop == imp.drop-1 && i < n-1:
			out = append(out, nil)
			continue
		case imp.swap > 0 && i%imp.swap == imp.swap-1 && i+1 < n:
			out = append(out, []int{i + 1, i})
			i++
			continue
		}
		tick := []int{i}
		if imp.dup > 0 && i%imp.dup == 0 {
			tick = append(tick, i)
		}
		out = append(out, tick)
	}
	return out
}

// lost is how many of n packets order never sends.
func (imp impair) lost(n int) int {
	sent := map[int]bool{}
	for _, tick := range imp.order(n) {
		for _, i := range tick {
			sent[i] = true
		}
	}
	return n - len(sent)
}

func udpPair(t *testing.T) (*net.UDPConn, int) {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, c.LocalAddr().(*net.UDPAddr).Port
}

// siprecJob hangs up a SIPREC call, waits for its live job to be done and
// checks that its custom_metadata holds each of wants (the recording's
// metadata as the door copies it).
func siprecJob(t *testing.T, ctx context.Context, d *daemonProc, key string, dlg *sipgo.DialogClientSession, wants ...string) map[string]any {
	t.Helper()
	if err := dlg.Bye(ctx); err != nil {
		t.Fatalf("bye: %v", err)
	}
	job := liveJobByCall(t, d, key, dlg.InviteRequest.CallID().Value(), 90*time.Second)
	if job["status"] != "done" {
		t.Fatalf("job %v", job["status"])
	}
	md, _ := job["custom_metadata"].(map[string]any)
	mdj, _ := json.Marshal(md)
	for _, want := range wants {
		if !strings.Contains(string(mdj), want) {
			t.Errorf("custom_metadata lacks %s: %s", want, mdj)
		}
	}
	return job
}

// liveJobByCall finds the live job of a call by its Call-ID and waits
// until it is done or error.
func liveJobByCall(t *testing.T, d *daemonProc, key, callID string, timeout time.Duration) map[string]any {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var page struct {
			Items []map[string]any `json:"items"`
		}
		status, body := d.do("GET", "/v2/live?custom_metadata[sip_call_id]="+url.QueryEscape(callID), key, nil, "", &page)
		if status != 200 {
			t.Fatalf("list live: %d %s", status, body)
		}
		if len(page.Items) > 1 {
			t.Fatalf("%d jobs for one call", len(page.Items))
		}
		if len(page.Items) == 1 {
			if s := page.Items[0]["status"]; s == "done" || s == "error" {
				var job map[string]any
				d.do("GET", "/v2/live/"+page.Items[0]["id"].(string), key, nil, "", &job)
				return job
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no finished job for call %s within %s (%d listed)", callID, timeout, len(page.Items))
		}
		time.Sleep(100 * time.Millisecond) // polling a real process, not settling
	}
}

// channelText joins the utterance texts of one channel.
func channelText(job map[string]any, ch int) string {
	res, _ := job["result"].(map[string]any)
	tr, _ := res["transcription"].(map[string]any)
	utts, _ := tr["utterances"].([]any)
	var words []string
	for _, u := range utts {
		m := u.(map[string]any)
		if c, _ := m["channel"].(float64); int(c) == ch {
			words = append(words, m["text"].(string))
		}
	}
	return strings.Join(words, " ")
}

// storedAudio returns the call's stored audio: channels and data bytes.
func storedAudio(t *testing.T, d *daemonProc, key, id string) (int, []byte) {
	t.Helper()
	status, wav := d.do("GET", "/v2/live/"+id+"/file", key, nil, "", nil)
	if status != 200 || len(wav) < 44 || string(wav[:4]) != "RIFF" {
		t.Fatalf("GET file: %d, %d bytes", status, len(wav))
	}
	return int(binary.LittleEndian.Uint16(wav[22:24])), wav[44:]
}

func TestSIPCall(t *testing.T) {
	d, addr := startSIPDaemon(t, fmt.Sprintf(sipConfig, "30s", "0s")+telephoneModel(t))
	key := createKey(t, d.DataDir, "acme")
	p := newPhone(t, addr)
	goUlaw, goRef := g711(t, "pocketsphinx-goforward.wav", "mulaw")
	lsAlaw, lsRef := g711(t, "ls-test-clean-1089-134686-0000.wav", "alaw")

	cases := []struct {
		name    string
		formats string // offer order; the first G.711 is chosen
		wantPT  uint8
		audio   []byte
		ref     string
		maxWER  float64
		imp     impair
		hold    bool
	}{
		{"pcmu goforward with hold", "0 8 101", 0, goUlaw, goRef, werSIPGo, impair{}, true},
		{"pcma librispeech", "8 0 101", 8, lsAlaw, lsRef, werSIPLS, impair{}, false},
		{"pcma loss reorder duplicates", "8 101", 8, lsAlaw, lsRef, werSIPLoss, impair{drop: 50, swap: 7, dup: 11}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			conn, port := udpPair(t)
			offer := offerSDP([]int{port}, c.formats, "sendrecv", false)
			dlg, code := p.call(ctx, "transcribe", "application/sdp", offer, sipmsg.NewHeader("X-Customer-Id", "cust-42"))
			if code != 200 {
				t.Fatalf("INVITE answered %d", code)
			}
			callID := dlg.InviteRequest.CallID().Value()
			addrs, pts, dir, formats := answered(t, dlg.InviteResponse.Body())
			if len(addrs) != 1 || pts[0] != c.wantPT || dir != "recvonly" || !strings.HasSuffix(formats, " 101") {
				t.Fatalf("answer %v pt %v dir %q formats %q, want pt %d recvonly with telephone-event\n%s", addrs, pts, dir, formats, c.wantPT, dlg.InviteResponse.Body())
			}
			released0, lost0 := d.metric("earshot_rtp_packets_total"), d.metric("earshot_rtp_lost_packets_total")
			sendRTP(t, conn, addrs[0], c.wantPT, c.audio, 4, c.imp, 0x1234)
			if c.hold {
				res := reinvite(t, ctx, dlg, offerSDP([]int{port}, c.formats, "inactive", false))
				if _, _, dir, _ := answered(t, res.Body()); res.StatusCode != 200 || dir != "inactive" {
					t.Fatalf("hold: %d %q", res.StatusCode, dir)
				}
				res = reinvite(t, ctx, dlg, offerSDP([]int{port}, c.formats, "sendrecv", false))
				if _, _, dir, _ := answered(t, res.Body()); res.StatusCode != 200 || dir != "recvonly" {
					t.Fatalf("unhold: %d %q", res.StatusCode, dir)
				}
			}
			if err := dlg.Bye(ctx); err != nil {
				t.Fatalf("bye: %v", err)
			}
			job := liveJobByCall(t, d, key, callID, 90*time.Second)
			t.Log(d.WaitLog(10*time.Second, "sip call ended", callID))
			if job["status"] != "done" || job["kind"] != "live" {
				t.Fatalf("job %v %v: %v", job["status"], job["kind"], job["error_code"])
			}
			// /metrics counts the call's RTP: exactly the packets the
			// impairment left out are lost, the rest played out.
			packets := (len(c.audio) + 159) / 160
			lost := d.metric("earshot_rtp_lost_packets_total") - lost0
			released := d.metric("earshot_rtp_packets_total") - released0
			if want := c.imp.lost(packets); lost != float64(want) {
				t.Errorf("earshot_rtp_lost_packets_total grew by %v, want %d", lost, want)
			}
			if want := float64(packets - c.imp.lost(packets)); released != want {
				t.Errorf("earshot_rtp_packets_total grew by %v, want %v", released, want)
			}
			md, _ := job["custom_metadata"].(map[string]any)
			if md["sip_call_id"] != callID || md["door"] != "sip" || md["sip_header_x_customer_id"] != "cust-42" || !strings.Contains(fmt.Sprint(md["sip_to"]), "transcribe@") {
				t.Errorf("custom_metadata %v", md)
			}
			full := channelText(job, 0)
			wer := recognizertest.WER(c.ref, full)
			t.Logf("WER %.3f: %s", wer, full)
			if wer > c.maxWER {
				t.Errorf("WER %.3f > %.3f", wer, c.maxWER)
			}
			ch, audio := storedAudio(t, d, key, job["id"].(string))
			if ch != 1 || len(audio) < len(c.audio) || len(audio) > len(c.audio)+3200 {
				t.Fatalf("stored %d channels, %d bytes; sent %d", ch, len(audio), len(c.audio))
			}
			same := 0
			for i := 0; i < len(c.audio); i += 160 {
				if bytes.Equal(audio[i:min(i+160, len(c.audio))], c.audio[i:min(i+160, len(c.audio))]) {
					same++
				}
			}
			frames := (len(c.audio) + 159) / 160
			if c.imp == (impair{}) && same != frames {
				t.Errorf("stored audio differs from what was sent in %d of %d packets", frames-same, frames)
			}
			if c.imp != (impair{}) && (same < frames*95/100 || same == frames) {
				t.Errorf("stored audio: %d of %d packets intact with 2%% lost", same, frames)
			}
			if c.imp == (impair{}) && c.ref == lsRef {
				if ws := wsTranscript(t, d, key, c.audio, "wav/alaw"); ws != full {
					t.Errorf("SIP transcript %q differs from the WebSocket door's %q on the same bytes", full, ws)
				}
			}
		})
	}
}

// wsTranscript sends audio through the WebSocket door and returns its
// final transcript.
func wsTranscript(t *testing.T, d *daemonProc, key string, audio []byte, encoding string) string {
	t.Helper()
	s := d.createLive(key, map[string]any{"encoding": encoding, "sample_rate": 8000, "bit_depth": 8, "language_config": map[string]any{"languages": []string{"en"}}})
	conn, err := dial(t, s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	done := make(chan struct{})
	go func() { defer close(done); readAll(t, conn, 2*time.Minute) }()
	stream(t, conn, audio, 8, 100, 0)
	conn.WriteJSON(map[string]any{"type": "stop_recording"})
	<-done
	var job map[string]any
	d.do("GET", "/v2/live/"+s.ID, key, nil, "", &job)
	return channelText(job, 0)
}

const siprecMetadata = `<?xml version="1.0" encoding="UTF-8"?>
<recording xmlns="urn:ietf:params:xml:ns:recording:1">
  <datamode>complete</datamode>
  <session session_id="sess-1"><sipSessionID>ab30317f1a784dc48ff824d0d3715d86;remote=47755a9de7794ba387653f2099600ef2</sipSessionID></session>
  <participant participant_id="p-alice"><nameID aor="sip:alice@pbx.example"><name xml:lang="en">Alice</name></nameID></participant>
  <participant participant_id="p-bob"><nameID aor="sip:bob@pbx.example"><name>Bob</name></nameID></participant>
  <stream stream_id="s-1" session_id="sess-1"><label>1</label></stream>
  <stream stream_id="s-2" session_id="sess-1"><label>2</label></stream>
  <participantstreamassoc participant_id="p-alice"><send>s-1</send><recv>s-2</recv></participantstreamassoc>
  <participantstreamassoc participant_id="p-bob"><send>s-2</send><recv>s-1</recv></participantstreamassoc>
</recording>`

// siprecBody is a SIPREC INVITE's multipart/mixed body (boundary
// b0undary): the SDP offer sdp and siprecMetadata.
func siprecBody(sdp []byte) string {
	return "--b0undary\r\nContent-Type: application/sdp\r\n\r\n" + string(sdp) +
		"\r\n--b0undary\r\nContent-Type: application/rs-metadata+xml\r\nContent-Disposition: recording-session\r\n\r\n" + siprecMetadata + "\r\n--b0undary--\r\n"
}

func TestSIPREC(t *testing.T) {
	d, addr := startSIPDaemon(t, fmt.Sprintf(sipConfig, "30s", "0s"))
	key := createKey(t, d.DataDir, "acme")
	p := newPhone(t, addr)
	p.tcp = true // the multipart INVITE is larger than a UDP datagram may be
	a, refA := g711(t, "pocketsphinx-goforward.wav", "mulaw")
	b, refB := g711(t, "ls-test-clean-1089-134691-0001.wav", "mulaw")
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	connA, portA := udpPair(t)
	connB, portB := udpPair(t)
	body := siprecBody(offerSDP([]int{portA, portB}, "0 101", "sendonly", true))
	dlg, code := p.call(ctx, "transcribe", "multipart/mixed;boundary=b0undary", []byte(body), sipmsg.NewHeader("Require", "siprec"))
	if code != 200 {
		t.Fatalf("SIPREC INVITE answered %d", code)
	}
	addrs, pts, dir, _ := answered(t, dlg.InviteResponse.Body())
	if len(addrs) != 2 || addrs[0].Port == addrs[1].Port || dir != "recvonly" {
		t.Fatalf("answer %v %v %q", addrs, pts, dir)
	}
	done := make(chan struct{})
	go func() { defer close(done); sendRTP(t, connB, addrs[1], 0, b, 8, impair{}, 0xB) }()
	sendRTP(t, connA, addrs[0], 0, a, 8, impair{}, 0xA)
	<-done
	job := siprecJob(t, ctx, d, key, dlg, `"siprec_session_id":"ab30317f1a784dc48ff824d0d3715d86`,
		`"aor":"sip:alice@pbx.example","channel":0`, `"aor":"sip:bob@pbx.example","channel":1`, `"label":"2"`)
	for ch, ref := range []string{refA, refB} {
		text := channelText(job, ch)
		wer := recognizertest.WER(ref, text)
		t.Logf("channel %d WER %.3f: %s", ch, wer, text)
		if wer > werSIPAny || text == "" {
			t.Errorf("channel %d WER %.3f > %.3f", ch, wer, werSIPAny)
		}
	}
	chans, audio := storedAudio(t, d, key, job["id"].(string))
	want := 2 * max(len(a), len(b))
	if chans != 2 || len(audio) < want-640 || len(audio) > want+6400 {
		t.Errorf("stored %d channels, %d bytes; want 2 channels, about %d", chans, len(audio), want)
	}
}

func TestSIPRefusals(t *testing.T) {
	d, addr := startSIPDaemon(t, fmt.Sprintf(sipConfig, "2s", "1s"))
	key := createKey(t, d.DataDir, "acme")
	p := newPhone(t, addr)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	_, port := udpPair(t)

	t.Run("options", func(t *testing.T) {
		req := sipmsg.NewRequest(sipmsg.OPTIONS, p.uri("transcribe"))
		res, err := p.cli.Do(ctx, req)
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("OPTIONS: %v %v", res, err)
		}
	})
	t.Run("no codec 488", func(t *testing.T) {
		if _, code := p.call(ctx, "transcribe", "application/sdp", offerSDP([]int{port}, "18 111", "sendrecv", false)); code != 488 {
			t.Fatalf("G.729/opus offer answered %d, want 488", code)
		}
	})
	t.Run("unknown user 404", func(t *testing.T) {
		if _, code := p.call(ctx, "nobody", "application/sdp", offerSDP([]int{port}, "0", "sendrecv", false)); code != 404 {
			t.Fatalf("unknown user answered %d, want 404", code)
		}
	})
	t.Run("cancel before answer", func(t *testing.T) {
		cctx, ccancel := context.WithCancel(ctx)
		dlg, err := p.dialogs.Invite(cctx, p.uri("transcribe"), offerSDP([]int{port}, "0", "sendrecv", false), sipmsg.NewHeader("Content-Type", "application/sdp"))
		if err != nil {
			t.Fatal(err)
		}
		err = dlg.WaitAnswer(cctx, sipgo.AnswerOptions{OnResponse: func(res *sipmsg.Response) error {
			if res.StatusCode == 180 {
				ccancel() // sends CANCEL while the door rings
			}
			return nil
		}})
		if err == nil {
			t.Fatalf("call answered despite CANCEL")
		}
		d.WaitLog(10*time.Second, "sip call cancelled before answer")
		var page struct {
			Items []any `json:"items"`
		}
		d.do("GET", "/v2/live?custom_metadata[sip_call_id]="+url.QueryEscape(dlg.InviteRequest.CallID().Value()), key, nil, "", &page)
		if len(page.Items) != 0 {
			t.Errorf("a cancelled call left %d jobs", len(page.Items))
		}
	})
	t.Run("rtp timeout ends the call with BYE", func(t *testing.T) {
		conn, port := udpPair(t)
		a, _ := g711(t, "pocketsphinx-goforward.wav", "mulaw")
		dlg, code := p.call(ctx, "transcribe", "application/sdp", offerSDP([]int{port}, "0", "sendrecv", false))
		if code != 200 {
			t.Fatalf("answered %d", code)
		}
		addrs, _, _, _ := answered(t, dlg.InviteResponse.Body())
		sendRTP(t, conn, addrs[0], 0, a[:8000], 4, impair{}, 7)
		callID := dlg.InviteRequest.CallID().Value()
		select {
		case id := <-p.byes:
			if id != callID {
				t.Fatalf("BYE for %s, want %s", id, callID)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("no BYE after the RTP timeout")
		}
		job := liveJobByCall(t, d, key, callID, 60*time.Second)
		if job["status"] != "done" {
			t.Fatalf("job %v after RTP timeout", job["status"])
		}
		d.WaitLog(5*time.Second, "sip call ended", "rtp: inactivity timeout")
	})

	_, saddr := startSIPDaemon(t, strings.Replace(fmt.Sprintf(sipConfig, "30s", "0s"), "allow: [127.0.0.0/8]", "allow: [10.0.0.0/8]", 1))
	t.Run("source not allowed 403", func(t *testing.T) {
		q := newPhone(t, saddr)
		if _, code := q.call(ctx, "transcribe", "application/sdp", offerSDP([]int{port}, "0", "sendrecv", false)); code != 403 {
			t.Fatalf("call from 127.0.0.1 answered %d, want 403", code)
		}
	})
}
