package e2e

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
)

// pauseState is the answer of POST /v2/live/{id}/pause and /resume.
type pauseState struct {
	ID      string      `json:"id"`
	Paused  bool        `json:"paused"`
	Since   float64     `json:"since"`
	Spans   []pauseSpan `json:"paused_intervals"`
	rawBody []byte
}

type pauseSpan struct {
	Start float64 `json:"start"`
	End   float64 `json:"end"`
}

// pauseLive calls POST /v2/live/{id}/pause (pause) or /resume, checked
// against the OpenAPI document, and returns its status and answer.
func pauseLive(t *testing.T, a *apiDoc, d *daemonProc, key, id string, pause bool) (int, pauseState) {
	t.Helper()
	word := "resume"
	if pause {
		word = "pause"
	}
	status, b := a.call(t, d, "POST /v2/live/{id}/"+word, "/v2/live/"+id+"/"+word, key, nil, "")
	var st pauseState
	if status == 200 {
		if err := json.Unmarshal(b, &st); err != nil {
			t.Fatalf("POST %s: %v: %s", word, err, b)
		}
	}
	st.rawBody = b
	return status, st
}

// liveReader reads a session's messages on its own goroutine: every one
// goes to all (read after done), and acks of audio to acked (the end of
// each byte_range), so the sender can wait for the session to have taken
// what it sent.
type liveReader struct {
	acked chan int64
	done  chan struct{}
	mu    sync.Mutex
	all   []liveMsg // guarded by mu
	code  int       // the close code, set before done is closed
}

func readLive(t *testing.T, c *websocket.Conn) *liveReader {
	r := &liveReader{acked: make(chan int64, 4096), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		c.SetReadDeadline(time.Now().Add(3 * time.Minute))
		for {
			_, b, err := c.ReadMessage()
			if err != nil {
				if ce, ok := err.(*websocket.CloseError); ok {
					r.code = ce.Code
				}
				return
			}
			var m liveMsg
			if json.Unmarshal(b, &m) != nil {
				continue
			}
			m.raw = b
			r.mu.Lock()
			r.all = append(r.all, m)
			r.mu.Unlock()
			if m.Type == "audio_chunk" && m.Acknowledged != nil && *m.Acknowledged {
				var d struct {
					ByteRange [2]int64 `json:"byte_range"`
				}
				json.Unmarshal(m.Data, &d)
				select {
				case r.acked <- d.ByteRange[1]:
				default:
				}
			}
		}
	}()
	return r
}

// waitAcked waits until the session has acknowledged n bytes.
func (r *liveReader) waitAcked(t *testing.T, n int64) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case got := <-r.acked:
			if got >= n {
				return
			}
		case <-deadline:
			t.Fatalf("no ack of %d bytes within 30 s", n)
		case <-r.done:
			t.Fatalf("socket closed before %d bytes were acknowledged", n)
		}
	}
}

// wavSamples reads a 16-bit mono WAV's samples (after its data chunk
// header).
func wavSamples(t *testing.T, b []byte) []int16 {
	t.Helper()
	for i := 12; i+8 <= len(b); {
		id, n := string(b[i:i+4]), int(binary.LittleEndian.Uint32(b[i+4:]))
		if id == "data" {
			data := b[i+8 : min(len(b), i+8+n)]
			out := make([]int16, len(data)/2)
			for k := range out {
				out[k] = int16(binary.LittleEndian.Uint16(data[2*k:]))
			}
			return out
		}
		i += 8 + n + n%2
	}
	t.Fatal("recording has no data chunk")
	return nil
}

// rmsOver is the RMS of samples (16 kHz) over [from, to) seconds.
func rmsOver(s []int16, from, to float64) float64 {
	a, b := int(from*16000), min(len(s), int(to*16000))
	if b <= a {
		return 0
	}
	var sum float64
	for _, v := range s[a:b] {
		sum += float64(v) * float64(v)
	}
	return math.Sqrt(sum / float64(b-a))
}

// wordsInside lists the words whose time reaches into a paused span by
// more than slack at either edge (an aligner may stretch a word's edge
// into the silence beside it by a few frames; a word heard in the span
// would sit in it).
func wordsInside(words, spans []pauseSpan, slack float64) []pauseSpan {
	var out []pauseSpan
	for _, w := range words {
		for _, sp := range spans {
			if w.End > sp.Start+slack && w.Start < sp.End-slack {
				out = append(out, w)
			}
		}
	}
	return out
}

// waitBatchPass polls a live record until its batch pass has ended.
func waitBatchPass(t *testing.T, d *daemonProc, key, id string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		rec := d.waitLive(key, id, 2*time.Minute)
		md, _ := rec["post_session_metadata"].(map[string]any)
		if md["batch_pass"] == "done" {
			return rec
		}
		if md["batch_pass"] != "pending" || time.Now().After(deadline) {
			t.Fatalf("batch pass of %s: %v (%v)", id, md["batch_pass"], md["batch_pass_error"])
		}
		time.Sleep(200 * time.Millisecond) // polling interval against a real process, not settling
	}
}

// TestLivePause streams real speech (LJ001-0001, 9.65 s of continuous
// reading) over the WebSocket at real-time pace and pauses it twice: from
// 3.0 s to 6.0 s through POST /v2/live/{id}/pause and /resume, and from 7.5 s
// to 8.5 s with the WebSocket's pause_recording and resume_recording, each
// once the audio before it was acknowledged (so the pause point is exact).
// Pausing twice and resuming twice answer 200 with the same state; another
// account's key gets 404 (as an unknown id), and the ended session 409.
// The stored recording (GET /v2/live/{id}/file) is digital silence over both
// spans (RMS 0) and the clip's speech elsewhere (and as long as the clip:
// the timeline is kept); no transcript message and no word of the stored
// record (the batch pass over the recording) has a word in a span, while
// words are heard before, between and after; the record lists both spans
// in post_session_metadata.paused_intervals; paused and resumed messages
// (receive_lifecycle_events) and the acks of the WebSocket's requests came,
// each as the OpenAPI document describes.
func TestLivePause(t *testing.T) {
	d := startDaemon(t, "", "")
	a := loadAPIDoc(t, mustRead(t, openAPIFile))
	key := createKey(t, d.DataDir, "acme")
	other := createKey(t, d.DataDir, "globex")
	path, _ := clip(t, "ljspeech-LJ001-0001.wav")
	audio := pcmOf(t, path)
	clipSamples := wavSamples(t, mustRead(t, path))
	const bytesPerSec = 32000
	spans := []pauseSpan{{3.0, 6.0}, {7.5, 8.5}}
	for _, sp := range spans {
		if r := rmsOver(clipSamples, sp.Start, sp.End); r < 300 {
			t.Fatalf("the clip has no speech over %v (RMS %.0f): the test would prove nothing", sp, r)
		}
	}

	s := d.createLive(key, map[string]any{"messages_config": map[string]any{"receive_lifecycle_events": true, "receive_partial_transcripts": true}})
	c, err := dial(t, s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := readLive(t, c)

	sent := int64(0)
	// sendUntil streams audio up to second at in 100 ms chunks, paced at
	// real time, and waits for all of it to be acknowledged.
	sendUntil := func(at float64) {
		end := min(int64(at*bytesPerSec), int64(len(audio)))
		start := time.Now()
		for n := 0; sent < end; n++ {
			next := min(sent+bytesPerSec/10, end)
			if err := c.WriteMessage(websocket.BinaryMessage, audio[sent:next]); err != nil {
				t.Fatalf("send: %v", err)
			}
			sent = next
			if d := time.Until(start.Add(time.Duration(n+1) * 100 * time.Millisecond)); d > 0 {
				time.Sleep(d) // real-time pacing of the sender, not settling
			}
		}
		r.waitAcked(t, sent)
	}
	// wsAsk sends a WebSocket pause_recording or resume_recording and waits
	// for its ack.
	wsAsk := func(typ string) {
		count := func() int {
			n := 0
			for _, m := range r.snapshot() {
				if m.Type == typ {
					n++
				}
			}
			return n
		}
		before := count()
		if err := c.WriteJSON(map[string]any{"type": typ}); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(30 * time.Second); count() == before; {
			if time.Now().After(deadline) {
				t.Fatalf("no %s ack within 30 s", typ)
			}
			time.Sleep(20 * time.Millisecond) // polling the reader, not settling
		}
	}

	sendUntil(spans[0].Start)
	for i := range 2 { // idempotent: the same answer twice
		status, st := pauseLive(t, a, d, key, s.ID, true)
		if status != 200 || !st.Paused || st.Since != spans[0].Start || len(st.Spans) != 1 || st.Spans[0].Start != spans[0].Start {
			t.Fatalf("pause %d: %d %s", i+1, status, st.rawBody)
		}
	}
	for _, k := range []string{other} {
		if status, st := pauseLive(t, a, d, k, s.ID, true); status != 404 {
			t.Fatalf("another account's pause: %d %s; want 404", status, st.rawBody)
		}
		if status, st := pauseLive(t, a, d, k, s.ID, false); status != 404 {
			t.Fatalf("another account's resume: %d %s; want 404", status, st.rawBody)
		}
	}
	if status, st := pauseLive(t, a, d, key, "00000000-0000-4000-8000-000000000000", true); status != 404 {
		t.Fatalf("unknown id: %d %s; want 404", status, st.rawBody)
	}
	sendUntil(spans[0].End)
	for i := range 2 {
		status, st := pauseLive(t, a, d, key, s.ID, false)
		if status != 200 || st.Paused || st.Since != spans[0].End || len(st.Spans) != 1 || st.Spans[0] != spans[0] {
			t.Fatalf("resume %d: %d %s", i+1, status, st.rawBody)
		}
	}
	sendUntil(spans[1].Start)
	wsAsk("pause_recording")
	sendUntil(spans[1].End)
	wsAsk("resume_recording")
	sendUntil(float64(len(audio)) / bytesPerSec)
	if err := c.WriteJSON(map[string]any{"type": "stop_recording"}); err != nil {
		t.Fatal(err)
	}
	<-r.done
	if r.code != 1000 {
		t.Fatalf("socket closed %d", r.code)
	}

	// Messages: paused and resumed at the spans' edges, the acks, every
	// message as documented, and no transcript word inside a span.
	var events []string
	for _, m := range r.all {
		a.checkMessage(t, "WebSocket", m.raw)
		switch m.Type {
		case "paused", "resumed", "pause_recording", "resume_recording":
			var d struct{ Time float64 }
			json.Unmarshal(m.Data, &d)
			events = append(events, fmt.Sprintf("%s@%g", m.Type, d.Time))
		}
	}
	want := fmt.Sprint([]string{"paused@3", "resumed@6", "paused@7.5", "pause_recording@7.5", "resumed@8.5", "resume_recording@8.5"})
	if fmt.Sprint(events) != want {
		t.Errorf("pause messages %v, want %s", events, want)
	}
	live := messageWords(t, r.all)
	if bad := wordsInside(live, spans, 0.05); len(bad) > 0 {
		t.Errorf("transcript messages have words inside the paused spans: %v", bad)
	}

	rec := waitBatchPass(t, d, key, s.ID)
	a.call(t, d, "GET /v2/live/{id}", "/v2/live/"+s.ID, key, nil, "")
	md := rec["post_session_metadata"].(map[string]any)
	b, _ := json.Marshal(md["paused_intervals"])
	var listed []pauseSpan
	if json.Unmarshal(b, &listed) != nil || fmt.Sprint(listed) != fmt.Sprint(spans) {
		t.Errorf("post_session_metadata.paused_intervals %s, want %v", b, spans)
	}
	words := recordWords(t, rec)
	if bad := wordsInside(words, spans, 0.1); len(bad) > 0 {
		t.Errorf("the stored record has words inside the paused spans: %v (all: %v)", bad, words)
	}
	for _, gap := range []pauseSpan{{0, spans[0].Start}, {spans[0].End, spans[1].Start}, {spans[1].End, 9.65}} {
		if len(wordsInside(words, []pauseSpan{gap}, 0)) == 0 {
			t.Errorf("the stored record has no word over %v, where the session was not paused: %v", gap, words)
		}
	}

	// The recording: silence over the spans, the clip elsewhere.
	status, wav := d.do("GET", "/v2/live/"+s.ID+"/file", key, nil, "", nil)
	if status != 200 {
		t.Fatalf("GET file: %d", status)
	}
	got := wavSamples(t, wav)
	if len(got) != len(clipSamples) {
		t.Fatalf("recording has %d samples, the clip %d: the timeline was not kept", len(got), len(clipSamples))
	}
	for _, sp := range spans {
		if rms := rmsOver(got, sp.Start, sp.End); rms > 1 {
			t.Errorf("recording RMS %.1f over the paused span %v, want about 0", rms, sp)
		}
	}
	for _, gap := range []pauseSpan{{0, 3}, {6, 7.5}, {8.5, 9.65}} {
		a, b := int(gap.Start*16000), min(len(got), int(gap.End*16000))
		for i := a; i < b; i++ {
			if got[i] != clipSamples[i] {
				t.Fatalf("recording differs from the clip at %.4f s, outside the paused spans", float64(i)/16000)
			}
		}
	}

	// The ended session: 409, pausing or resuming.
	for _, pause := range []bool{true, false} {
		if status, st := pauseLive(t, a, d, key, s.ID, pause); status != 409 {
			t.Errorf("pause %v of the ended session: %d %s; want 409", pause, status, st.rawBody)
		}
	}
}

// snapshot is the messages read so far (the reader goroutine appends to
// all; this copy is taken under its lock).
func (r *liveReader) snapshot() []liveMsg {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]liveMsg(nil), r.all...)
}

// sipPauseConfig has a route whose calls start paused (an IVR's payment
// leg), on RTP ports of its own.
const sipPauseConfig = `
sip:
  listen: 127.0.0.1:0
  rtp_ports: 32600-32699
  allow: [127.0.0.0/8]
  routes:
    - user: payment
      account: acme
      live:
        language_config: {languages: [en]}
        pci: {start_paused: true}
`

// TestLivePauseSIP calls a route with live.pci.start_paused and streams
// real speech (LJ001-0001 as 8 kHz PCMU) at real time; about 4 s in, the
// call is resumed through POST /v2/live/{id}/resume by its live id. The
// stored recording is µ-law silence from the start to the resume point and
// the bytes sent after it; the record lists the span [0, resume] and has no
// word in it, and words after it. (Pausing a call by its DTMF sequence is
// not built yet.)
func TestLivePauseSIP(t *testing.T) {
	d, addr := startSIPDaemon(t, sipPauseConfig)
	a := loadAPIDoc(t, mustRead(t, openAPIFile))
	key := createKey(t, d.DataDir, "acme")
	p := newPhone(t, addr)
	ulaw, _ := g711(t, "ljspeech-LJ001-0001.wav", "mulaw")

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	conn, port := udpPair(t)
	dlg, code := p.call(ctx, "payment", "application/sdp", offerSDP([]int{port}, "0 101", "sendrecv", false))
	if code != 200 {
		t.Fatalf("INVITE answered %d", code)
	}
	callID := dlg.InviteRequest.CallID().Value()
	addrs, _, _, _ := answered(t, dlg.InviteResponse.Body())
	id := liveIDByCall(t, d, key, callID)

	sent := make(chan struct{})
	go func() {
		defer close(sent)
		sendRTP(t, conn, addrs[0], 0, ulaw, 1, impair{}, 0x5150)
	}()
	time.Sleep(4 * time.Second) // the call's audio plays at real time: resume about 4 s into it
	status, st := pauseLive(t, a, d, key, id, false)
	if status != 200 || st.Paused || len(st.Spans) != 1 || st.Spans[0].Start != 0 || st.Spans[0].End != st.Since || st.Since < 2 || st.Since > 6 {
		t.Fatalf("resume: %d %s", status, st.rawBody)
	}
	resumed := st.Since
	<-sent
	if err := dlg.Bye(ctx); err != nil {
		t.Fatalf("bye: %v", err)
	}
	job := liveJobByCall(t, d, key, callID, 90*time.Second)
	if job["status"] != "done" {
		t.Fatalf("job %v: %v", job["status"], job["error_code"])
	}
	rec := waitBatchPass(t, d, key, id)
	b, _ := json.Marshal(rec["post_session_metadata"].(map[string]any)["paused_intervals"])
	var listed []pauseSpan
	if json.Unmarshal(b, &listed) != nil || len(listed) != 1 || listed[0] != (pauseSpan{0, resumed}) {
		t.Errorf("paused_intervals %s, want [{0 %g}]", b, resumed)
	}
	span := []pauseSpan{{0, resumed}}
	words := recordWords(t, rec)
	t.Logf("resumed at %.3f s; stored words %v", resumed, words)
	if bad := wordsInside(words, span, 0.1); len(bad) > 0 {
		t.Errorf("words inside the paused span %v: %v", span, bad)
	}
	if len(words) == 0 || words[len(words)-1].Start < resumed+1 {
		t.Errorf("no words after the resume at %.3f s: %v", resumed, words)
	}

	_, audio := storedAudio(t, d, key, id)
	cut := int(resumed * 8000)
	if len(audio) < len(ulaw) || cut > len(ulaw) {
		t.Fatalf("stored %d bytes, sent %d, resumed at byte %d", len(audio), len(ulaw), cut)
	}
	for i := range cut {
		if audio[i] != 0xff {
			t.Fatalf("stored byte %d (%.3f s) is %#x, before the resume at %.3f s: want µ-law silence", i, float64(i)/8000, audio[i], resumed)
		}
	}
	// After the resume (a packet's margin), the bytes sent.
	for i := cut + 160; i < len(ulaw); i++ {
		if audio[i] != ulaw[i] {
			t.Fatalf("stored byte %d (%.3f s), after the resume, differs from the one sent", i, float64(i)/8000)
		}
	}
}

// liveIDByCall finds the live job of a running call by its Call-ID.
func liveIDByCall(t *testing.T, d *daemonProc, key, callID string) string {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; {
		var page struct {
			Items []struct {
				ID string `json:"id"`
			} `json:"items"`
		}
		status, body := d.do("GET", "/v2/live?custom_metadata[sip_call_id]="+url.QueryEscape(callID), key, nil, "", &page)
		if status != 200 {
			t.Fatalf("list live: %d %s", status, body)
		}
		if len(page.Items) == 1 {
			return page.Items[0].ID
		}
		if time.Now().After(deadline) {
			t.Fatalf("no live job for call %s", callID)
		}
		time.Sleep(100 * time.Millisecond) // polling a real process, not settling
	}
}
