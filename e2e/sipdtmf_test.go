package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/emiago/sipgo"
	sipmsg "github.com/emiago/sipgo/sip"
)

// The card number keyed in the DTMF tests (a test PAN): none of its
// digits may be found in clear in the record, a callback or a log line.
const testCard = "4929738105621847"

// startDTMFDaemon starts a daemon whose SIP door (on RTP ports of the
// DTMF tests) routes each user of routes to account acme with those live
// options (custom_metadata.call naming the user), on the telephone model.
func startDTMFDaemon(t *testing.T, routes map[string]map[string]any) (*daemonProc, string) {
	t.Helper()
	cfg := "sip:\n  listen: 127.0.0.1:0\n  rtp_ports: 32800-32839\n  max_calls: 4\n  allow: [127.0.0.0/8]\n  routes:\n"
	for user, live := range routes {
		live["custom_metadata"] = map[string]any{"call": user}
		b, err := json.Marshal(live) // JSON is YAML
		if err != nil {
			t.Fatal(err)
		}
		cfg += fmt.Sprintf("    - user: %s\n      account: acme\n      live: %s\n", user, b)
	}
	return startSIPDaemon(t, cfg+telephoneModel(t))
}

// baresipCtl is a baresip process driven over its ctrl_tcp module
// (netstring JSON commands and events), so a test can key digits into a
// running call.
type baresipCtl struct {
	t      *testing.T
	conn   net.Conn
	events chan string // the type of each event baresip reports
	cmd    *exec.Cmd
	out    *tailWriter // the end of its output, for a failing test's message
	exited chan struct{}
}

// startBaresipCtl starts baresip with an aufile source playing wav (8 kHz
// mono) and PCMU, its ctrl_tcp on a free local port, and connects to it.
func startBaresipCtl(t *testing.T, wav string, limit time.Duration) *baresipCtl {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctl := ln.Addr().String()
	ln.Close()
	bin, dir := baresipConfig(t, "PCMU/8000/1", wav, 8000, "ctrl_tcp_listen "+ctl)
	// Appended: an extra line replaces the defaults' lines of its key.
	f, err := os.OpenFile(filepath.Join(dir, "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString("module_app ctrl_tcp.so\n")
		f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), limit+10*time.Second)
	b := &baresipCtl{t: t, events: make(chan string, 64), out: &tailWriter{max: 16 << 10}, exited: make(chan struct{})}
	b.cmd = exec.CommandContext(ctx, bin, "-f", dir, "-t", fmt.Sprint(int(limit.Seconds())))
	b.cmd.Stdout, b.cmd.Stderr = b.out, b.out
	if err := b.cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() { b.cmd.Wait(); cancel(); close(b.exited) }()
	t.Cleanup(func() {
		b.cmd.Process.Kill()
		<-b.exited
	})
	for deadline := time.Now().Add(10 * time.Second); ; {
		if b.conn, err = net.Dial("tcp", ctl); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("baresip's ctrl_tcp on %s: %v\n%s", ctl, err, b.out.String())
		}
		time.Sleep(50 * time.Millisecond) // polling a starting process
	}
	t.Cleanup(func() { b.conn.Close() })
	go b.read()
	return b
}

// read takes baresip's netstrings ("len:json,") and passes the events on.
func (b *baresipCtl) read() {
	r := bufio.NewReader(b.conn)
	for {
		head, err := r.ReadString(':')
		if err != nil {
			return
		}
		n, err := strconv.Atoi(strings.TrimSuffix(head, ":"))
		if err != nil || n > 1<<20 {
			return
		}
		msg := make([]byte, n+1) // and the trailing comma
		if _, err := io.ReadFull(r, msg); err != nil {
			return
		}
		var m struct {
			Event bool   `json:"event"`
			Type  string `json:"type"`
		}
		if json.Unmarshal(msg[:n], &m) == nil && m.Event {
			select {
			case b.events <- m.Type:
			default:
			}
		}
	}
}

// command sends one command (a menu command's name and its parameters).
func (b *baresipCtl) command(name, params string) {
	b.t.Helper()
	msg, _ := json.Marshal(map[string]string{"command": name, "params": params, "token": name})
	if _, err := fmt.Fprintf(b.conn, "%d:%s,", len(msg), msg); err != nil {
		b.t.Fatalf("baresip %s: %v", name, err)
	}
}

// waitEvent waits for baresip to report an event of type typ.
func (b *baresipCtl) waitEvent(typ string, timeout time.Duration) {
	b.t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case got := <-b.events:
			if got == typ {
				return
			}
		case <-deadline:
			b.t.Fatalf("baresip reported no %s within %s:\n%s", typ, timeout, b.out.String())
		case <-b.exited:
			b.t.Fatalf("baresip exited before %s:\n%s", typ, b.out.String())
		}
	}
}

// keyDigits keys digits into baresip's call one at a time (menu command
// sndcode: the key, then its release: one RFC 4733 event), each once the
// daemon has counted the one before (earshot_dtmf_keys_total), so every
// key is its own event; at is when each was keyed, since start.
func (b *baresipCtl) keyDigits(d *daemonProc, digits string, start time.Time) (at []time.Duration) {
	b.t.Helper()
	before := d.metricWith("earshot_dtmf_keys_total", "source", "rfc4733")
	for i := range len(digits) {
		at = append(at, time.Since(start))
		b.command("sndcode", digits[i:i+1])
		for deadline := time.Now().Add(10 * time.Second); d.metricWith("earshot_dtmf_keys_total", "source", "rfc4733") < before+float64(i+1); {
			if time.Now().After(deadline) {
				b.t.Fatalf("the daemon counted %v of %d keys within 10 s; its log lines on dtmf:\n%s", d.metricWith("earshot_dtmf_keys_total", "source", "rfc4733")-before, i+1,
					strings.Join(d.linesWith("dtmf"), "\n"))
			}
			time.Sleep(20 * time.Millisecond) // polling a real process, not settling
		}
	}
	return at
}

// dtmfKey is a dtmf message's data.
type dtmfKey struct {
	Digit    *string `json:"digit"`
	Masked   bool    `json:"masked"`
	Index    int     `json:"index"`
	Time     float64 `json:"time"`
	Duration float64 `json:"duration"`
	Source   string  `json:"source"`
}

// recordKeys are the dtmf messages of a finished live job's
// result.messages.
func recordKeys(t *testing.T, job map[string]any) []dtmfKey {
	t.Helper()
	res, _ := job["result"].(map[string]any)
	msgs, _ := res["messages"].([]any)
	var out []dtmfKey
	for _, s := range msgs {
		var m struct {
			Type string  `json:"type"`
			Data dtmfKey `json:"data"`
		}
		if err := json.Unmarshal([]byte(s.(string)), &m); err != nil {
			t.Fatalf("result.messages entry %q: %v", s, err)
		}
		if m.Type == "dtmf" {
			out = append(out, m.Data)
		}
	}
	return out
}

// checkMaskedKeys checks that a call's n keys of source are in its record
// (as GET /v2/live/{id} answers it, checked against the OpenAPI document)
// and its callbacks as masked dtmf messages, in order, and that no digit
// of card is in clear in the record, a callback body or a log line.
func checkMaskedKeys(t *testing.T, d *daemonProc, key string, hook *callbackReceiver, job map[string]any, source string, n int, card string) {
	t.Helper()
	a := loadAPIDoc(t, mustRead(t, openAPIFile))
	if status, b := a.call(t, d, "GET /v2/live/{id}", "/v2/live/"+job["id"].(string), key, nil, ""); status != 200 || json.Unmarshal(b, &job) != nil {
		t.Fatalf("GET /v2/live/%s: %d", job["id"], status)
	}
	for _, m := range job["result"].(map[string]any)["messages"].([]any) {
		if strings.Contains(m.(string), `"type":"dtmf"`) {
			a.checkMessage(t, "result.messages", []byte(m.(string)))
		}
	}
	keys := recordKeys(t, job)
	if len(keys) != n {
		t.Fatalf("%d dtmf messages in result.messages, want %d", len(keys), n)
	}
	dur := job["file"].(map[string]any)["audio_duration"].(float64)
	for i, k := range keys {
		if k.Digit != nil || !k.Masked || k.Index != i+1 || k.Source != source || k.Time < 0 || k.Time > dur || i > 0 && k.Time < keys[i-1].Time {
			t.Errorf("dtmf message %d: %+v (digit %v)", i+1, k, k.Digit)
		}
	}
	t.Logf("%d masked keys at (time, duration) %v s", n, func() (ts [][2]float64) {
		for _, k := range keys {
			ts = append(ts, [2]float64{k.Time, k.Duration})
		}
		return ts
	}())
	if psm, _ := job["post_session_metadata"].(map[string]any); fmt.Sprint(psm["dtmf"]) != fmt.Sprintf("map[keys:%d omitted:0]", n) {
		t.Errorf("post_session_metadata.dtmf %v", psm["dtmf"])
	}
	rec, _ := json.Marshal(job)
	if strings.Contains(string(rec), `"digit":"`) || strings.Contains(string(rec), card) {
		t.Errorf("a digit in clear in the record")
	}
	id := job["id"].(string)
	var cb []dtmfKey
	for deadline := time.Now().Add(30 * time.Second); ; {
		cb = cb[:0]
		for _, h := range hook.snapshot() {
			var body struct {
				ID      string `json:"id"`
				Event   string `json:"event"`
				Payload struct {
					Data dtmfKey `json:"data"`
				} `json:"payload"`
			}
			if json.Unmarshal(h.body, &body) != nil || body.ID != id {
				continue
			}
			if strings.Contains(string(h.body), `"digit":"`) || strings.Contains(string(h.body), card) {
				t.Errorf("a digit in clear in a callback: %s", h.body)
			}
			if body.Event == "live.dtmf" {
				cb = append(cb, body.Payload.Data)
			}
		}
		if len(cb) >= n || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond) // polling the callback receiver, not settling
	}
	if len(cb) != n {
		t.Errorf("%d live.dtmf callbacks, want %d", len(cb), n)
	}
	// The outbox delivers in parallel: the callbacks come in any order,
	// each key once.
	slices.SortFunc(cb, func(a, b dtmfKey) int { return a.Index - b.Index })
	for i, k := range cb {
		if k.Digit != nil || !k.Masked || k.Index != i+1 || k != keys[i] {
			t.Errorf("live.dtmf callback %d: %+v, record %+v", i+1, k, keys[min(i, len(keys)-1)])
		}
	}
	for _, l := range d.linesWith("") {
		if strings.Contains(l, card) || strings.Contains(l, `"digit"`) || strings.Contains(l, "Signal=") {
			t.Errorf("a digit in a log line: %s", l)
		}
	}
}

// TestSIPDTMFRFC4733 keys a 16-digit card number into a real baresip call
// (PCMU, RFC 4733 telephone-events, the menu's sndcode over ctrl_tcp)
// while it plays real speech: the stored record has 16 dtmf messages, in
// order, masked (pci.mask_dtmf's default: digit null), and so do the
// callbacks; no digit is in clear in the record, a callback or a log line.
func TestSIPDTMFRFC4733(t *testing.T) {
	hook, hookURL := startHookReceiver(t)
	d, addr := startDTMFDaemon(t, map[string]map[string]any{
		"dtmf": {"callback": true, "callback_config": map[string]any{"url": hookURL}},
	})
	key := createKey(t, d.DataDir, "acme")
	wav := wav8k(t, "ls-test-clean-1089-134686-0000.wav")
	b := startBaresipCtl(t, wav, 40*time.Second)
	b.command("dial", "sip:dtmf@"+addr)
	b.waitEvent("CALL_ESTABLISHED", 20*time.Second)
	start := time.Now()
	at := b.keyDigits(d, testCard, start)
	t.Logf("keyed at %v after the answer", at)
	b.command("hangup", "")
	b.waitEvent("CALL_CLOSED", 20*time.Second)
	job := liveJobByMetadata(t, d, key, "call", "dtmf", 60*time.Second)
	if job["status"] != "done" {
		t.Fatalf("job %v", job["status"])
	}
	if fullTranscript(job) == "" {
		t.Error("the call's speech was not transcribed")
	}
	checkMaskedKeys(t, d, key, hook, job, "rfc4733", len(testCard), testCard)
}

// wav8k is a clip resampled by ffmpeg to 8 kHz mono WAV, as a phone's
// microphone gives it (baresip's own resampler aliases: codecs_test.go).
func wav8k(t *testing.T, name string) string {
	t.Helper()
	src, _ := clip(t, name)
	out := t.TempDir() + "/clip8k.wav"
	if b, err := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-i", src, "-ar", "8000", "-ac", "1", out).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v %s", err, b)
	}
	return out
}

// info sends an in-dialog INFO with a body of content type ctype and
// returns its status.
func info(t *testing.T, ctx context.Context, dlg *sipgo.DialogClientSession, ctype, body string) int {
	t.Helper()
	req := sipmsg.NewRequest(sipmsg.INFO, dlg.InviteResponse.Contact().Address)
	req.AppendHeader(sipmsg.NewHeader("Content-Type", ctype))
	req.SetBody([]byte(body))
	res, err := dlg.Do(ctx, req)
	if err != nil {
		t.Fatalf("info: %v", err)
	}
	return res.StatusCode
}

// TestSIPDTMFInfo keys the card number as SIP INFO requests
// (application/dtmf-relay, and application/dtmf: baresip 1.0 sends no INFO
// DTMF, so a sipgo phone places the call) while the call's RTP carries
// real speech: the same 16 masked dtmf messages in order, in the record
// and the callbacks, no digit in clear anywhere; malformed bodies answer
// 400 and other types 415 and add no key. A second call on a route with
// pci.mask_dtmf false and callback_config.receive_dtmf_events false has
// its digits in clear in its record, and no dtmf callback.
func TestSIPDTMFInfo(t *testing.T) {
	hook, hookURL := startHookReceiver(t)
	d, addr := startDTMFDaemon(t, map[string]map[string]any{
		"dtmf":  {"callback": true, "callback_config": map[string]any{"url": hookURL}, "messages_config": map[string]any{"receive_dtmf_events": true}},
		"clear": {"pci": map[string]any{"mask_dtmf": false}, "callback": true, "callback_config": map[string]any{"url": hookURL, "receive_dtmf_events": false}},
		"flood": {},
	})
	key := createKey(t, d.DataDir, "acme")
	p := newPhone(t, addr)
	ulaw, _ := g711(t, "ls-test-clean-1089-134686-0000.wav", "mulaw")
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	// call places a call with speech, keys digits as INFO at a person's
	// pace, then flood more as fast as the door answers them.
	call := func(user, digits string, flood int) map[string]any {
		conn, port := udpPair(t)
		dlg, code := p.call(ctx, user, "application/sdp", offerSDP([]int{port}, "0 101", "sendrecv", false))
		if code != 200 {
			t.Fatalf("INVITE answered %d", code)
		}
		addrs, _, _, _ := answered(t, dlg.InviteResponse.Body())
		sent := make(chan struct{})
		go func() {
			defer close(sent)
			sendRTP(t, conn, addrs[0], 0, ulaw, 2, impair{}, 0x7e57)
		}()
		pace := time.NewTicker(150 * time.Millisecond) // a person's keying, during the speech
		defer pace.Stop()
		for i := range len(digits) {
			<-pace.C
			ctype, body := "application/dtmf-relay", fmt.Sprintf("Signal=%c\r\nDuration=%d\r\n", digits[i], 100+10*i)
			if i%4 == 3 {
				ctype, body = "application/dtmf", digits[i:i+1]
			}
			if code := info(t, ctx, dlg, ctype, body); code != 200 {
				t.Fatalf("INFO %d answered %d", i+1, code)
			}
		}
		for body, want := range map[string]int{"Signal=\r\n": 400, "Signal=5\r\nSignal=6\r\n": 400, "Duration=100\r\n": 400, "Signal=5\r\nDuration=x\r\n": 400} {
			if code := info(t, ctx, dlg, "application/dtmf-relay", body); code != want {
				t.Errorf("INFO %q answered %d, want %d", body, code, want)
			}
		}
		if code := info(t, ctx, dlg, "text/plain", "Signal=5"); code != 415 {
			t.Errorf("INFO text/plain answered %d, want 415", code)
		}
		if code := info(t, ctx, dlg, "application/dtmf-relay", ""); code != 200 {
			t.Errorf("an empty INFO answered %d, want 200", code)
		}
		for range flood {
			if code := info(t, ctx, dlg, "application/dtmf", "5"); code != 200 {
				t.Fatalf("a flood's INFO answered %d", code)
			}
		}
		<-sent
		if err := dlg.Bye(ctx); err != nil {
			t.Fatalf("bye: %v", err)
		}
		job := liveJobByCall(t, d, key, dlg.InviteRequest.CallID().Value(), 90*time.Second)
		if job["status"] != "done" {
			t.Fatalf("job %v", job["status"])
		}
		if fullTranscript(job) == "" {
			t.Error("the call's speech was not transcribed")
		}
		return job
	}

	job := call("dtmf", testCard, 0)
	checkMaskedKeys(t, d, key, hook, job, "sip_info", len(testCard), testCard)
	if n := d.metricWith("earshot_dtmf_keys_total", "source", "sip_info"); n != float64(len(testCard)) {
		t.Errorf("earshot_dtmf_keys_total{source=sip_info} %v, want %d", n, len(testCard))
	}

	// pci.mask_dtmf false, receive_dtmf_events false on the callback.
	clear := call("clear", "12#", 0)
	var got []string
	for _, k := range recordKeys(t, clear) {
		if k.Digit == nil || k.Masked {
			t.Errorf("key %+v masked on a route with pci.mask_dtmf false", k)
			continue
		}
		got = append(got, *k.Digit)
	}
	if strings.Join(got, "") != "12#" {
		t.Errorf("keys in clear %q, want 12#", got)
	}
	rp, _ := json.Marshal(clear["request_params"])
	if !strings.Contains(string(rp), `"mask_dtmf":false`) || !strings.Contains(string(rp), `"receive_dtmf_events":false`) {
		t.Errorf("request_params %s", rp)
	}
	for _, h := range hook.snapshot() {
		if strings.Contains(string(h.body), clear["id"].(string)) && strings.Contains(string(h.body), `"event":"live.dtmf"`) {
			t.Errorf("a dtmf callback with receive_dtmf_events false: %s", h.body)
		}
	}

	// A flood of 600 INFO keys, answered 200 each: the session takes the
	// call's bound (40 at once, 20 a second after), the rest are counted
	// as dropped and logged once.
	start := time.Now()
	flooded := call("flood", "", 600)
	took := time.Since(start).Seconds()
	kept := len(recordKeys(t, flooded))
	dropped := d.metric("earshot_sip_dtmf_dropped_total")
	t.Logf("flood of 600 INFO keys over a %.1f s call: %d kept, %v dropped", took, kept, dropped)
	if kept < 40 || float64(kept) > 40+20*took+1 || float64(kept)+dropped != 600 {
		t.Errorf("flood: %d kept, %v dropped of 600 in %.1f s", kept, dropped, took)
	}
	if n := d.logCount("dtmf flood"); n != 1 {
		t.Errorf("%d dtmf flood log lines, want 1", n)
	}
}

// TestSIPPauseByDTMF pauses and resumes a real baresip call by its
// route's DTMF sequences (pci.pause_sequence "*1", pci.resume_sequence
// "*2", keyed as RFC 4733 events) around a clip of speech it must not
// keep: the call plays "go forward ten meters", 2 s of silence, the
// hidden clip (LibriSpeech 1995-1837-0001, 8.7 s), 2 s of silence and "go
// forward ten meters" again, and the keys come in the silences. The record
// lists one paused span covering the hidden clip; the stored recording is
// digital silence over it (µ-law 0xff: RMS 0) while the audio sent there
// was speech; no word of the record (the batch pass over the recording)
// lies in it, none of the hidden clip's words is anywhere in it, and words
// are heard before and after; the four keys are masked dtmf messages.
func TestSIPPauseByDTMF(t *testing.T) {
	d, addr := startDTMFDaemon(t, map[string]map[string]any{
		"payment": {"pci": map[string]any{"pause_sequence": "*1", "resume_sequence": "*2"}},
	})
	key := createKey(t, d.DataDir, "acme")
	gf, _ := clip(t, "pocketsphinx-goforward.wav")
	hidden, hiddenRef := clip(t, "ls-test-clean-1995-1837-0001.wav")
	wav := filepath.Join(t.TempDir(), "call8k.wav")
	filter := "[0]aresample=8000[a];[1]aresample=8000[h];[0]aresample=8000[c];" +
		"aevalsrc=0:d=2:s=8000[s1];aevalsrc=0:d=2:s=8000[s2];[a][s1][h][s2][c]concat=n=5:v=0:a=1"
	if b, err := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-i", gf, "-i", hidden, "-filter_complex", filter, "-ac", "1", "-ar", "8000", wav).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v %s", err, b)
	}
	const gfLen, gap, hiddenLen = 2.786, 2.0, 8.73
	hiddenFrom, hiddenTo := gfLen+gap, gfLen+gap+hiddenLen // 4.79 to 13.52 s

	b := startBaresipCtl(t, wav, 40*time.Second)
	b.command("dial", "sip:payment@"+addr)
	b.waitEvent("CALL_ESTABLISHED", 20*time.Second)
	start := time.Now()
	keyAt := func(at float64, digits string) {
		time.Sleep(time.Until(start.Add(time.Duration(at * float64(time.Second))))) // the call plays at real time: key in the silence
		b.keyDigits(d, digits, start)
	}
	keyAt(gfLen+0.5, "*1")
	keyAt(hiddenTo+0.5, "*2")
	b.waitEvent("CALL_CLOSED", 20*time.Second) // the file's end hangs up
	job := liveJobByMetadata(t, d, key, "call", "payment", 60*time.Second)
	if job["status"] != "done" {
		t.Fatalf("job %v", job["status"])
	}
	id := job["id"].(string)
	rec := waitBatchPass(t, d, key, id)
	pb, _ := json.Marshal(rec["post_session_metadata"].(map[string]any)["paused_intervals"])
	var spans []pauseSpan
	if json.Unmarshal(pb, &spans) != nil || len(spans) != 1 {
		t.Fatalf("paused_intervals %s, want one span", pb)
	}
	sp := spans[0]
	t.Logf("paused %v; the hidden clip at [%.2f, %.2f]", sp, hiddenFrom, hiddenTo)
	if sp.Start < gfLen || sp.Start > hiddenFrom-0.2 || sp.End < hiddenTo+0.2 || sp.End > hiddenTo+gap {
		t.Fatalf("paused span %v does not cover the hidden clip [%.2f, %.2f] within the silences", sp, hiddenFrom, hiddenTo)
	}
	keys := recordKeys(t, rec)
	if len(keys) != 4 {
		t.Errorf("%d dtmf messages, want the 4 keys of the sequences", len(keys))
	}
	for _, k := range keys {
		if k.Digit != nil || !k.Masked || k.Source != "rfc4733" {
			t.Errorf("a sequence's key %+v in clear", k)
		}
	}

	_, audio := storedAudio(t, d, key, id)
	sent := wavSamples(t, mustRead(t, wav)) // 8 kHz: the audio baresip played
	from, to := int(sp.Start*8000), int(sp.End*8000)
	if to > len(audio) {
		t.Fatalf("stored %d bytes (%.2f s), the span ends at %.2f s", len(audio), float64(len(audio))/8000, sp.End)
	}
	for i := from; i < to; i++ {
		if audio[i] != 0xff {
			t.Fatalf("stored byte %d (%.3f s), inside the paused span %v, is %#x: want µ-law silence", i, float64(i)/8000, sp, audio[i])
		}
	}
	if r := rmsOver(sent, hiddenFrom/2, hiddenTo/2); r < 300 { // rmsOver counts 16 kHz samples
		t.Fatalf("the hidden clip's RMS as sent is %.0f: the test would prove nothing", r)
	}
	words := recordWords(t, rec)
	if bad := wordsInside(words, spans, 0.1); len(bad) > 0 {
		t.Errorf("words inside the paused span %v: %v", sp, bad)
	}
	text := fullTranscript(rec)
	t.Logf("record: %q", text)
	for _, w := range strings.Fields(hiddenRef) {
		if len(w) >= 5 && slices.Contains(strings.Fields(text), w) {
			t.Errorf("the hidden clip's word %q is in the record %q", w, text)
		}
	}
	if len(words) == 0 || words[0].Start > sp.Start || words[len(words)-1].End < sp.End {
		t.Errorf("words %v: want some before %.2f and after %.2f s", words, sp.Start, sp.End)
	}

	// The audit trail has the call's session and the caller's pause and
	// resume, under no key (before 2026-11-30: none of them).
	// By action: the test's own reads of the session (live.read, under its
	// key, hundreds while it waits for the batch pass) fill a page.
	admin := createKey(t, d.DataDir, "admin")
	var got []string
	for _, action := range []string{"live.create", "live.pause", "live.resume"} {
		var p auditPage
		if st, body := d.do("GET", "/admin/audit?limit=100&action="+action+"&object="+id, admin, nil, "", &p); st != 200 {
			t.Fatalf("GET /admin/audit: %d %s", st, body)
		}
		for _, e := range p.Items {
			got = append(got, e.Action+" "+e.Source+" "+e.KeyID+" "+e.Account)
		}
	}
	want := []string{"live.create sip  acme", "live.pause dtmf  acme", "live.resume dtmf  acme"}
	if !slices.Equal(got, want) {
		t.Errorf("audit entries of the call's session %q, want %q", got, want)
	}
}

// TestWHIPDTMFChromium keys the card number from Chromium
// (RTCDTMFSender.insertDTMF: RFC 4733 beside PCMU) into a WHIP session
// while its fake microphone plays speech: the answer negotiates
// telephone-event, and the record has the 16 keys as masked dtmf messages
// in order, no digit in clear in it.
func TestWHIPDTMFChromium(t *testing.T) {
	d := startDaemon(t, "", telephoneModel(t)+webrtcConfig)
	key := createKey(t, d.DataDir, "acme")
	wav, _ := clip(t, "pocketsphinx-goforward.wav")
	s := d.createLive(key, map[string]any{"encoding": "wav/ulaw", "bit_depth": 8, "sample_rate": 8000, "channels": 1})
	seen := whipBrowser(t, d, s, wav, "audio/pcmu", 6, testCard)
	if seen["status"] != float64(201) || seen["delete_status"] != float64(200) || seen["dtmf_played"] != testCard {
		t.Fatalf("browser saw %v", seen)
	}
	job := d.waitLive(key, s.ID, time.Minute)
	if job["status"] != "done" {
		t.Fatalf("job %v", job["status"])
	}
	keys := recordKeys(t, job)
	if len(keys) != len(testCard) {
		t.Fatalf("%d dtmf messages, want %d", len(keys), len(testCard))
	}
	for i, k := range keys {
		if k.Digit != nil || !k.Masked || k.Index != i+1 || k.Source != "rfc4733" || k.Duration <= 0 || i > 0 && k.Time < keys[i-1].Time {
			t.Errorf("dtmf message %d: %+v", i+1, k)
		}
	}
	t.Logf("keys at %v", keys)
	if rec, _ := json.Marshal(job); strings.Contains(string(rec), `"digit":"`) || strings.Contains(string(rec), testCard) {
		t.Error("a digit in clear in the record")
	}
}
