package e2e

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	pionwebrtc "github.com/pion/webrtc/v4"
	"github.com/pion/webrtc/v4/pkg/media"
	zafg711 "github.com/zaf/g711"

	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// webrtcConfig lets the test's pion peer on loopback reach the daemon.
const webrtcConfig = "webrtc:\n  include_loopback: true\n  udp_ports: \"42000-42999\"\n"

// werWebRTC bounds the WER of "go forward ten meters" sent as 8 kHz PCMU
// over WebRTC: measured 0.25 (2026-11-21, "go forward and meters"), the same
// as the WebSocket door gives for the same 8 kHz audio; the bound adds one
// word. The test also checks that both doors give the same transcript.
const werWebRTC = 0.5

// ulawOf converts a speech file to 8 kHz mono µ-law with ffmpeg (to 16-bit
// PCM) and zaf/g711 (to µ-law), as a phone or browser would send it.
func ulawOf(t *testing.T, path string) []byte {
	t.Helper()
	pcm, err := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-i", path, "-ar", "8000", "-ac", "1", "-f", "s16le", "-").Output()
	if err != nil {
		t.Fatalf("ffmpeg: %v", err)
	}
	return zafg711.EncodeUlaw(pcm)
}

// whipPeer is a WHIP client: a pion PeerConnection sending one audio track.
type whipPeer struct {
	pc    *pionwebrtc.PeerConnection
	track *pionwebrtc.TrackLocalStaticSample
	up    chan struct{}
	offer string
}

func newWHIPPeer(t *testing.T, codecs ...pionwebrtc.RTPCodecCapability) *whipPeer {
	t.Helper()
	me := &pionwebrtc.MediaEngine{}
	for i, c := range codecs {
		pt := map[string]pionwebrtc.PayloadType{pionwebrtc.MimeTypePCMU: 0, pionwebrtc.MimeTypePCMA: 8}[c.MimeType]
		if pt == 0 && c.MimeType != pionwebrtc.MimeTypePCMU {
			pt = pionwebrtc.PayloadType(111 + i)
		}
		if err := me.RegisterCodec(pionwebrtc.RTPCodecParameters{RTPCodecCapability: c, PayloadType: pt}, pionwebrtc.RTPCodecTypeAudio); err != nil {
			t.Fatal(err)
		}
	}
	var se pionwebrtc.SettingEngine
	se.SetIncludeLoopbackCandidate(true)
	se.SetNetworkTypes([]pionwebrtc.NetworkType{pionwebrtc.NetworkTypeUDP4})
	pc, err := pionwebrtc.NewAPI(pionwebrtc.WithMediaEngine(me), pionwebrtc.WithSettingEngine(se)).NewPeerConnection(pionwebrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	p := &whipPeer{pc: pc, up: make(chan struct{})}
	var once sync.Once
	pc.OnConnectionStateChange(func(s pionwebrtc.PeerConnectionState) {
		if s == pionwebrtc.PeerConnectionStateConnected {
			once.Do(func() { close(p.up) })
		}
	})
	if p.track, err = pionwebrtc.NewTrackLocalStaticSample(codecs[0], "audio", "e2e"); err != nil {
		t.Fatal(err)
	}
	if _, err := pc.AddTransceiverFromTrack(p.track, pionwebrtc.RTPTransceiverInit{Direction: pionwebrtc.RTPTransceiverDirectionSendonly}); err != nil {
		t.Fatal(err)
	}
	offer, err := pc.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	gathered := pionwebrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(offer); err != nil {
		t.Fatal(err)
	}
	<-gathered
	p.offer = pc.LocalDescription().SDP
	return p
}

var (
	pcmuCap = pionwebrtc.RTPCodecCapability{MimeType: pionwebrtc.MimeTypePCMU, ClockRate: 8000, Channels: 1}
	opusCap = pionwebrtc.RTPCodecCapability{MimeType: pionwebrtc.MimeTypeOpus, ClockRate: 48000, Channels: 2}
)

// whipPost sends an offer; it returns the response and its body.
func (d *daemonProc) whipPost(id, token, ctype, sdp string) (*http.Response, []byte) {
	d.t.Helper()
	req, err := http.NewRequest("POST", d.Base+"/v2/live/"+id+"/whip", strings.NewReader(sdp))
	if err != nil {
		d.t.Fatal(err)
	}
	req.Header.Set("Content-Type", ctype)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return d.send(req)
}

func (d *daemonProc) send(req *http.Request) (*http.Response, []byte) {
	d.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return resp, b.Bytes()
}

func tokenOf(t *testing.T, wsURL string) string {
	t.Helper()
	u, err := url.Parse(wsURL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("token")
}

// liveG711 is a POST /v2/live body for 8 kHz mono µ-law.
func liveG711() map[string]any {
	return map[string]any{"encoding": "wav/ulaw", "bit_depth": 8, "sample_rate": 8000, "channels": 1,
		"messages_config": map[string]any{"receive_partial_transcripts": true, "receive_lifecycle_events": true}}
}

func TestWebRTCWHIP(t *testing.T) {
	d := startDaemon(t, "", webrtcConfig)
	key := createKey(t, d.DataDir, "acme")
	s := d.createLive(key, liveG711())
	tok := tokenOf(t, s.URL)

	// The WebSocket listens for messages; it is attached before WHIP: a
	// WebSocket attaching later takes the session over, audio included
	// (live.Service.AttachAudio). Its dial returns at the upgrade, before
	// the daemon has attached it, so the test waits for start_session,
	// which the session's first attachment starts (a CI run on a loaded
	// box had the WHIP POST attach first).
	ws, err := dial(t, s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	var first liveMsg
	_, b, err := ws.ReadMessage()
	if err != nil || json.Unmarshal(b, &first) != nil || first.Type != "start_session" {
		t.Fatalf("first WebSocket message %q (%v), want start_session", b, err)
	}
	first.raw = b
	type wsResult struct {
		msgs []liveMsg
		code int
	}
	wsDone := make(chan wsResult, 1)
	go func() {
		msgs, code := readAll(t, ws, 60*time.Second)
		wsDone <- wsResult{append([]liveMsg{first}, msgs...), code}
	}()

	p := newWHIPPeer(t, pcmuCap)
	resp, answer := d.whipPost(s.ID, tok, "application/sdp", p.offer)
	if resp.StatusCode != 201 {
		t.Fatalf("WHIP POST: %d %s", resp.StatusCode, answer)
	}
	loc := resp.Header.Get("Location")
	if ct := resp.Header.Get("Content-Type"); ct != "application/sdp" {
		t.Errorf("answer Content-Type %q", ct)
	}
	if !strings.HasPrefix(loc, "/v2/live/"+s.ID+"/whip/") {
		t.Fatalf("Location %q", loc)
	}
	if !strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "Location") {
		t.Errorf("Access-Control-Expose-Headers %q lacks Location", resp.Header.Get("Access-Control-Expose-Headers"))
	}
	if !strings.Contains(string(answer), "PCMU/8000") || strings.Contains(string(answer), "opus") {
		t.Errorf("answer does not negotiate PCMU only:\n%s", answer)
	}
	if err := p.pc.SetRemoteDescription(pionwebrtc.SessionDescription{Type: pionwebrtc.SDPTypeAnswer, SDP: string(answer)}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.up:
	case <-time.After(10 * time.Second):
		t.Fatal("WebRTC did not connect within 10s")
	}

	// A second offer for the connected session is refused and leaves it be.
	p2 := newWHIPPeer(t, pcmuCap)
	if resp, body := d.whipPost(s.ID, tok, "application/sdp", p2.offer); resp.StatusCode != 409 {
		t.Errorf("second offer: %d %s, want 409", resp.StatusCode, body)
	}

	// Send the clip at real time in 20 ms packets, then 300 ms of silence.
	path, ref := clip(t, "pocketsphinx-goforward.wav")
	audio := ulawOf(t, path)
	audio = append(audio, bytes.Repeat([]byte{0xFF}, 2400)...)
	tick := time.NewTicker(20 * time.Millisecond)
	for i := 0; i < len(audio); i += 160 {
		<-tick.C
		if err := p.track.WriteSample(media.Sample{Data: audio[i:min(i+160, len(audio))], Duration: 20 * time.Millisecond}); err != nil {
			t.Fatal(err)
		}
	}
	tick.Stop()

	req, _ := http.NewRequest("DELETE", d.Base+loc, nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	if resp, body := d.send(req); resp.StatusCode != 200 {
		t.Fatalf("WHIP DELETE: %d %s", resp.StatusCode, body)
	}
	if resp, _ := d.send(req); resp.StatusCode != 404 {
		t.Errorf("second DELETE: %d, want 404", resp.StatusCode)
	}

	var job map[string]any
	if status, body := d.do("GET", "/v2/live/"+s.ID, key, nil, "", &job); status != 200 || job["status"] != "done" {
		t.Fatalf("live job after DELETE: %d %s", status, body)
	}
	tr := job["result"].(map[string]any)["transcription"].(map[string]any)
	wer := recognizertest.WER(ref, tr["full_transcript"].(string))
	t.Logf("WebRTC 8 kHz PCMU WER %.3f: %q", wer, tr["full_transcript"])
	if wer > werWebRTC {
		t.Errorf("WER %.3f > %.3f", wer, werWebRTC)
	}

	// Both attachments are in the audit trail under the session's key,
	// from the client's address: the WebSocket's and the one WHIP peer
	// the door took (the refused second offer attached nothing).
	admin := createKey(t, d.DataDir, "admin")
	count := func(es []auditEntry, action string) (n int) {
		for _, e := range es {
			if e.Action == action && e.Account == "acme" && e.KeyID != "" && strings.HasPrefix(e.Source, "127.0.0.1:") {
				n++
			}
		}
		return n
	}
	waitAudit(t, d, admin, "object="+s.ID, func(es []auditEntry) bool {
		return count(es, "live.stream") == 1 && count(es, "live.whip") == 1
	})

	status, wav := d.do("GET", "/v2/live/"+s.ID+"/file", key, nil, "", nil)
	if status != 200 || len(wav) < 44 || string(wav[:4]) != "RIFF" {
		t.Fatalf("GET file: %d, %d bytes", status, len(wav))
	}
	if tag, rate := binary.LittleEndian.Uint16(wav[20:]), binary.LittleEndian.Uint32(wav[24:]); tag != 7 || rate != 8000 {
		t.Errorf("recording is format %d at %d Hz, want µ-law (7) at 8000", tag, rate)
	}
	data := int(binary.LittleEndian.Uint32(wav[40:]))
	// Every packet was sent after the connection was up, on loopback: the
	// recording is the audio sent, to the byte, or one packet short at most.
	if data != len(wav)-44 || data > len(audio) || data < len(audio)-160 {
		t.Errorf("recording holds %d audio bytes (file %d), sent %d", data, len(wav)-44, len(audio))
	}

	// The same audio through the WebSocket door gives the same transcript.
	s2 := d.createLive(key, liveG711())
	ws2, err := dial(t, s2.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer ws2.Close()
	stream(t, ws2, audio, 8, 20, 20*time.Millisecond)
	ws2.WriteJSON(map[string]any{"type": "stop_recording"})
	readAll(t, ws2, 60*time.Second)
	var job2 map[string]any
	if status, body := d.do("GET", "/v2/live/"+s2.ID, key, nil, "", &job2); status != 200 || job2["status"] != "done" {
		t.Fatalf("WebSocket job: %d %s", status, body)
	}
	tr2 := job2["result"].(map[string]any)["transcription"].(map[string]any)
	if tr2["full_transcript"] != tr["full_transcript"] {
		t.Errorf("WebRTC transcript %q, WebSocket transcript of the same audio %q", tr["full_transcript"], tr2["full_transcript"])
	}

	r := <-wsDone
	if r.code != 1000 {
		t.Errorf("WebSocket closed with %d, want 1000", r.code)
	}
	var finals, partials int
	types := map[string]bool{}
	for _, m := range r.msgs {
		types[m.Type] = true
		if m.Type == "transcript" {
			var data struct {
				IsFinal bool `json:"is_final"`
			}
			json.Unmarshal(m.Data, &data)
			if data.IsFinal {
				finals++
			} else {
				partials++
			}
		}
	}
	if finals == 0 || !types["end_session"] || !types["start_recording"] {
		t.Errorf("WebSocket listener got %d finals, %d partials, types %v", finals, partials, types)
	}
}

func TestWebRTCBadInput(t *testing.T) {
	d := startDaemon(t, "", webrtcConfig+"live:\n  token_ttl: 3s\n")
	key := createKey(t, d.DataDir, "acme")
	s := d.createLive(key, liveG711())
	tok := tokenOf(t, s.URL)
	other := d.createLive(key, liveG711())
	pcm := d.createLive(key, map[string]any{"encoding": "wav/pcm", "sample_rate": 16000})
	pcm44 := d.createLive(key, map[string]any{"encoding": "wav/pcm", "sample_rate": 44100})
	good := newWHIPPeer(t, pcmuCap)
	opus := newWHIPPeer(t, opusCap)
	forged := tok[:len(tok)-4] + "0000"
	if forged == tok {
		forged = tok[:len(tok)-4] + "1111"
	}

	tests := []struct {
		name       string
		id, token  string
		ctype, sdp string
		want       int
		inBody     string
	}{
		{"no token", s.ID, "", "application/sdp", good.offer, 401, "Bearer"},
		{"forged token", s.ID, forged, "application/sdp", good.offer, 401, ""},
		{"another session's token", other.ID, tok, "application/sdp", good.offer, 401, ""},
		{"wrong content type", s.ID, tok, "application/json", good.offer, 415, "application/sdp"},
		{"malformed sdp", s.ID, tok, "application/sdp", "v=0\r\nnot sdp at all\r\n", 400, "sdp"},
		{"opus offer for a mu-law session", s.ID, tok, "application/sdp", opus.offer, 406, "PCMU"},
		{"PCMU offer for a 16 kHz session (Opus)", pcm.ID, tokenOf(t, pcm.URL), "application/sdp", good.offer, 406, "opus"},
		{"session in linear16 at 44.1 kHz", pcm44.ID, tokenOf(t, pcm44.URL), "application/sdp", good.offer, 422, "sample_rate"},
		{"unknown session", "00000000-0000-4000-8000-000000000000", "00000000-0000-4000-8000-000000000000.1.x", "application/sdp", good.offer, 401, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := d.whipPost(tc.id, tc.token, tc.ctype, tc.sdp)
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d %s, want %d", resp.StatusCode, body, tc.want)
			}
			var eb struct {
				StatusCode       int      `json:"statusCode"`
				Message          string   `json:"message"`
				RequestID        string   `json:"request_id"`
				ValidationErrors []string `json:"validation_errors"`
			}
			if err := json.Unmarshal(body, &eb); err != nil || eb.StatusCode != tc.want || eb.Message == "" || eb.RequestID == "" {
				t.Fatalf("error body %s is not the contract's", body)
			}
			if all := eb.Message + " " + strings.Join(eb.ValidationErrors, " "); !strings.Contains(all, tc.inBody) {
				t.Errorf("error %q does not mention %q", all, tc.inBody)
			}
			if resp.Header.Get("Access-Control-Allow-Origin") != "*" {
				t.Errorf("error response without CORS")
			}
		})
	}

	// The session is untouched by the refused offers: a good one connects.
	resp, answer := d.whipPost(s.ID, tok, "application/sdp", good.offer)
	if resp.StatusCode != 201 {
		t.Fatalf("good offer after bad ones: %d %s", resp.StatusCode, answer)
	}
	loc := resp.Header.Get("Location")
	if err := good.pc.SetRemoteDescription(pionwebrtc.SessionDescription{Type: pionwebrtc.SDPTypeAnswer, SDP: string(answer)}); err != nil {
		t.Fatal(err)
	}

	t.Run("CORS preflight", func(t *testing.T) {
		for _, path := range []string{"/v2/live/" + s.ID + "/whip", loc} {
			req, _ := http.NewRequest("OPTIONS", d.Base+path, nil)
			req.Header.Set("Origin", "http://elsewhere.example")
			req.Header.Set("Access-Control-Request-Method", "POST")
			req.Header.Set("Access-Control-Request-Headers", "authorization, content-type")
			resp, _ := d.send(req)
			h := resp.Header
			if resp.StatusCode != 204 || h.Get("Access-Control-Allow-Origin") != "*" ||
				!strings.Contains(h.Get("Access-Control-Allow-Headers"), "Authorization") ||
				!strings.Contains(h.Get("Access-Control-Expose-Headers"), "Location") {
				t.Errorf("OPTIONS %s: %d %v", path, resp.StatusCode, h)
			}
			m := h.Get("Access-Control-Allow-Methods")
			if want := map[bool]string{true: "POST", false: "DELETE"}[path != loc]; !strings.Contains(m, want) {
				t.Errorf("OPTIONS %s allows %q, want %s", path, m, want)
			}
		}
	})
	t.Run("PATCH is not supported", func(t *testing.T) {
		req, _ := http.NewRequest("PATCH", d.Base+loc, strings.NewReader("a=end-of-candidates\r\n"))
		req.Header.Set("Content-Type", "application/trickle-ice-sdpfrag")
		if resp, body := d.send(req); resp.StatusCode != 405 {
			t.Errorf("PATCH: %d %s, want 405", resp.StatusCode, body)
		}
	})
	t.Run("DELETE of an unknown resource", func(t *testing.T) {
		req, _ := http.NewRequest("DELETE", d.Base+"/v2/live/"+s.ID+"/whip/0123456789abcdef0123456789abcdef", nil)
		if resp, body := d.send(req); resp.StatusCode != 404 {
			t.Errorf("DELETE: %d %s, want 404", resp.StatusCode, body)
		}
	})
	t.Run("expired token", func(t *testing.T) {
		e := d.createLive(key, liveG711())
		deadline := time.Now().Add(20 * time.Second)
		for {
			var job map[string]any
			d.do("GET", "/v2/live/"+e.ID, key, nil, "", &job)
			if job["status"] == "error" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("unconnected session still %v after its token expired", job["status"])
			}
			time.Sleep(100 * time.Millisecond) // polling interval against a real process
		}
		// The session ended when its token expired (404: no such session);
		// once the token's second has passed, the token itself is refused.
		p := newWHIPPeer(t, pcmuCap)
		for {
			resp, body := d.whipPost(e.ID, tokenOf(t, e.URL), "application/sdp", p.offer)
			if resp.StatusCode == 401 {
				break
			}
			if resp.StatusCode != 404 || time.Now().After(deadline) {
				t.Fatalf("expired token: %d %s, want 401 (or 404 until the token's second has passed)", resp.StatusCode, body)
			}
			time.Sleep(100 * time.Millisecond) // polling interval against a real process
		}
	})

	req, _ := http.NewRequest("DELETE", d.Base+loc, nil)
	if resp, body := d.send(req); resp.StatusCode != 200 {
		t.Fatalf("DELETE: %d %s", resp.StatusCode, body)
	}
	var job map[string]any
	if status, body := d.do("GET", "/v2/live/"+s.ID, key, nil, "", &job); status != 200 || job["status"] != "done" {
		t.Errorf("session after DELETE: %d %s", status, body)
	}
}

func TestConsole(t *testing.T) {
	d := startDaemon(t, "", "")
	tests := []struct {
		path   string
		status int
		ctype  string
		has    string
	}{
		{"/console", 200, "text/html; charset=utf-8", `<script src="/console/console.js"`},
		{"/console/index.html", 200, "text/html; charset=utf-8", `<label for="apikey">`},
		{"/console/console.js", 200, "text/javascript; charset=utf-8", "sessionStorage"},
		{"/console/console.css", 200, "text/css; charset=utf-8", ":focus-visible"},
		{"/console/missing.js", 404, "application/json", `"statusCode":404`},
		{"/console/console.go", 404, "application/json", `"statusCode":404`},
		{"/console/..%2Fserver.go", 404, "application/json", `"statusCode":404`},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			req, _ := http.NewRequest("GET", d.Base+tc.path, nil)
			resp, body := d.send(req)
			if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != tc.ctype || !bytes.Contains(body, []byte(tc.has)) {
				t.Fatalf("%d %q, %d bytes; want %d %q containing %q", resp.StatusCode, resp.Header.Get("Content-Type"), len(body), tc.status, tc.ctype, tc.has)
			}
			if tc.status == 200 && (!strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'self'") || resp.Header.Get("X-Content-Type-Options") != "nosniff") {
				t.Errorf("missing security headers: %v", resp.Header)
			}
		})
	}
}

// browserTools finds Chromium ($CHROMIUM, default /usr/bin/chromium), node
// and playwright-core ($EARSHOT_NODE_MODULES, default
// ../bin/e2e-node/node_modules); missing says what is not there ("" when
// all are), and how `make test-deps` installs it.
func browserTools() (browser, node, modules, missing string) {
	browser = os.Getenv("CHROMIUM")
	if browser == "" {
		browser = "/usr/bin/chromium"
	}
	modules = os.Getenv("EARSHOT_NODE_MODULES")
	if modules == "" {
		modules, _ = filepath.Abs("../bin/e2e-node/node_modules")
	}
	node, err := exec.LookPath("node")
	if _, serr := os.Stat(browser); serr != nil || err != nil {
		return "", "", "", "needs chromium and node (make test-deps)"
	}
	if _, err := os.Stat(filepath.Join(modules, "playwright-core")); err != nil {
		return "", "", "", fmt.Sprintf("needs playwright-core in %s (make test-deps)", modules)
	}
	return browser, node, modules, ""
}

// TestConsoleBrowser drives /console in Debian's chromium (headless, fake
// microphone playing a speech file) with playwright-core: it records over
// WebRTC until a final transcript shows, then uploads a file and sees its
// result. Screenshots go to $EARSHOT_ARTIFACTS (default ../bin/artifacts).
// It needs chromium (apt-get install chromium) and playwright-core under
// $EARSHOT_NODE_MODULES (default ../bin/e2e-node/node_modules, installed by
// `npm install --prefix bin/e2e-node playwright-core@1.65.1`).
func TestConsoleBrowser(t *testing.T) {
	browser, node, modules, missing := browserTools()
	if missing != "" {
		t.Skip(missing)
	}
	shots := os.Getenv("EARSHOT_ARTIFACTS")
	if shots == "" {
		shots, _ = filepath.Abs("../bin/artifacts")
	}
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, "", "")
	key := createKey(t, d.DataDir, "acme")
	wav, ref := clip(t, "pocketsphinx-goforward.wav")

	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Second)
	defer cancel()
	// A run whose browser process itself fails (Chromium start-up on a
	// loaded machine) is tried once more; what the page showed is checked
	// below either way.
	var out []byte
	for attempt := 1; ; attempt++ {
		cmd := exec.CommandContext(ctx, node, "testdata/console_browser.cjs", d.Base, key, wav, shots)
		cmd.Env = append(os.Environ(), "NODE_PATH="+modules, "CHROMIUM="+browser)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		var err error
		if out, err = cmd.Output(); err == nil {
			break
		}
		if attempt == 2 || ctx.Err() != nil {
			t.Fatalf("browser run: %v\n%s", err, stderr.String())
		}
		t.Logf("browser run %d failed, trying again: %v\n%s", attempt, err, stderr.String())
	}
	var seen struct {
		LiveFinals       []string `json:"live_finals"`
		LiveTranscript   string   `json:"live_transcript"`
		UploadTranscript string   `json:"upload_transcript"`
		UploadUtterances int      `json:"upload_utterances"`
		JobsRows         int      `json:"jobs_rows"`
		Errors           []string `json:"errors"`
	}
	if err := json.Unmarshal(out, &seen); err != nil {
		t.Fatalf("browser output %q: %v", out, err)
	}
	t.Logf("browser saw %+v; screenshots in %s", seen, shots)
	if len(seen.LiveFinals) == 0 || strings.TrimSpace(seen.LiveTranscript) == "" || strings.HasPrefix(seen.LiveTranscript, "(") {
		t.Errorf("recording from the microphone showed no final transcript")
	}
	if wer := recognizertest.WER(ref, seen.UploadTranscript); wer > werLibriSpeech || seen.UploadUtterances == 0 {
		t.Errorf("uploaded file: transcript %q (WER %.2f), %d utterances", seen.UploadTranscript, wer, seen.UploadUtterances)
	}
	if len(seen.Errors) > 0 {
		t.Errorf("page errors: %q", seen.Errors)
	}
	// The console asks for Opus: its live session is 16 kHz PCM (wideband).
	var page struct {
		Items []map[string]any `json:"items"`
	}
	// One session a browser run (two when the first run was tried again).
	if status, body := d.do("GET", "/v2/live", key, nil, "", &page); status != 200 || len(page.Items) == 0 || len(page.Items) > 2 {
		t.Fatalf("list live: %d %.300s", status, body)
	}
	for _, it := range page.Items {
		if tag, rate := recordingFormat(t, d, key, it["id"].(string)); tag != 1 || rate != 16000 {
			t.Errorf("the console's recording is format %d at %d Hz, want PCM (1) at 16000 (Opus)", tag, rate)
		}
	}
}
