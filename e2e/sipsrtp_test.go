package e2e

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// sipSRTPConfig has one route per call of TestSIPSRTPBaresip: plain
// (srtp optional, the default), srtp mandatory with SDES allowed over UDP
// (the lab setting: the test has no TLS), and mandatory without it.
const sipSRTPConfig = `
sip:
  listen: 127.0.0.1:0
  rtp_ports: 31800-31839
  max_calls: 4
  allow: [127.0.0.0/8]
  routes:
    - user: plain
      account: acme
      live: {custom_metadata: {call: plain}}
    - user: plainhd
      account: acme
      live: {custom_metadata: {call: plainhd}}
    - user: secure
      account: acme
      srtp: mandatory
      allow_sdes_without_tls: true
      live: {custom_metadata: {call: secure}}
    - user: securehd
      account: acme
      srtp: mandatory
      allow_sdes_without_tls: true
      live: {custom_metadata: {call: securehd}}
    - user: strict
      account: acme
      srtp: mandatory
      live: {custom_metadata: {call: strict}}
`

// clearWindows indexes every 8-byte window of audio (the clip's G.711)
// that is not near-constant, to find the clip's clear audio in captured
// datagrams at any alignment: 8 random bytes match one of the ~83000
// windows of 10 s with odds of 2^-47.
func clearWindows(audio []byte) map[uint64]bool {
	set := map[uint64]bool{}
	for i := 0; i+8 <= len(audio); i++ {
		w := audio[i : i+8]
		distinct := map[byte]bool{}
		for _, b := range w {
			distinct[b] = true
		}
		if len(distinct) >= 4 {
			set[binary.BigEndian.Uint64(w)] = true
		}
	}
	return set
}

// clearCounter counts captured datagrams holding a window of the clip.
func clearCounter(set map[uint64]bool, n *atomic.Int64) func([]byte) {
	return func(p []byte) {
		for i := 0; i+8 <= len(p); i++ {
			if set[binary.BigEndian.Uint64(p[i:])] {
				n.Add(1)
				return
			}
		}
	}
}

// baresipSRTP places one call from baresip to uri offering codecs,
// playing wav (rate Hz) until it ends or limit passes; mediaenc, when set,
// is the account's (srtp-mand: RTP/SAVP with SDES). answered says whether
// the door must answer it; a refused call returns at once. extra are more
// config lines (sip_cafile for TLS). It returns baresip's output. Unlike
// baresip (codecs_test.go) it loads the srtp module beside the codecs.
func baresipSRTP(t *testing.T, uri, codecs, mediaenc, wav string, rate int, limit time.Duration, answered bool, extra ...string) string {
	t.Helper()
	dir := t.TempDir()
	config := strings.Join(append([]string{"poll_method poll", "sip_listen 127.0.0.1:0", "audio_source aufile," + wav,
		"audio_player aufile,/dev/null", "audio_alert aufile,/dev/null", fmt.Sprintf("ausrc_srate %d", rate), fmt.Sprintf("auplay_srate %d", rate),
		"module_path /usr/lib/baresip/modules", "module g711.so", "module g722.so", "module aufile.so", "module srtp.so",
		"module_app account.so", "module_app menu.so"}, extra...), "\n") + "\n"
	account := "<sip:phone@127.0.0.1>;regint=0;audio_codecs=" + codecs
	if mediaenc != "" {
		account += ";mediaenc=" + mediaenc
	}
	for name, body := range map[string]string{"config": config, "accounts": account + "\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out, err := runBaresipCall(t.Context(), "baresip", limit, "-f", dir, "-e", "/dial "+uri)
	if err != nil {
		t.Fatalf("baresip: %v\n%s", err, out)
	}
	established := strings.Contains(out, "Call established")
	switch {
	case answered && (!established || !strings.Contains(out, "terminated")):
		t.Fatalf("baresip did not complete a call:\n%s", out)
	case !answered && established:
		t.Fatalf("the call was answered:\n%s", out)
	}
	return out
}

// TestSIPSRTPBaresip places real baresip calls of the same clip in clear
// and with SDES-SRTP (baresip's srtp module, mediaenc=srtp-mand: RTP/SAVP
// with AES_CM_128_HMAC_SHA1_80 and _32), in PCMU and G.722: each SRTP call
// is answered, decrypted and transcribed to within one word of the same
// clip in clear. A capture of the loopback during the PCMU calls finds the
// clip's clear G.711 in the plain call's datagrams and in none of the SRTP
// call's. A plain offer to a srtp: mandatory route gets 488, and so does an
// SRTP offer over UDP to a route without allow_sdes_without_tls.
func TestSIPSRTPBaresip(t *testing.T) {
	d, addr := startSIPDaemon(t, telephoneModel(t)+sipSRTPConfig)
	key := createKey(t, d.DataDir, "acme")
	wav16, ref := clip(t, codecClip)
	wav8 := narrowband(t, wav16)
	mulaw, _ := g711(t, codecClip, "mulaw")
	windows := clearWindows(mulaw)
	nwords := len(strings.Fields(ref))

	type result struct {
		wer   float64
		clear int64 // captured datagrams holding the clip's clear G.711
		seen  int64 // captured datagrams of the RTP ports
	}
	call := func(t *testing.T, user, codecs, mediaenc, wav string, rate int, want string) result {
		var clear atomic.Int64
		cap := startLoopCapture(t, 31800, 31839, clearCounter(windows, &clear))
		baresipSRTP(t, "sip:"+user+"@"+addr, codecs, mediaenc, wav, rate, 16*time.Second, true)
		cap.stop()
		job := liveJobByMetadata(t, d, key, "call", user, 60*time.Second)
		if job["status"] != "done" {
			t.Fatalf("job %v", job["status"])
		}
		d.WaitLog(5*time.Second, `"msg":"sip call answered"`, `"srtp":"`+want+`"`)
		got := fullTranscript(job)
		wer := recognizertest.WER(ref, got)
		t.Logf("%s (%s, srtp %s): WER %.3f, %d of %d captured datagrams hold clear audio: %q", user, codecs, want, wer, clear.Load(), cap.seen.Load(), got)
		return result{wer, clear.Load(), cap.seen.Load()}
	}
	pairs := []struct {
		name                  string
		plainUser, secureUser string
		codecs, wav           string
		rate                  int
		suite                 string
	}{
		{"PCMU", "plain", "secure", "PCMU/8000/1", wav8, 8000, "AES_CM_128_HMAC_SHA1_80"},
		{"G722", "plainhd", "securehd", "G722/16000/1", wav16, 16000, "AES_CM_128_HMAC_SHA1_80"},
	}
	for _, p := range pairs {
		t.Run(p.name, func(t *testing.T) {
			plain := call(t, p.plainUser, p.codecs, "", p.wav, p.rate, "none")
			secure := call(t, p.secureUser, p.codecs, "srtp-mand", p.wav, p.rate, p.suite)
			if diff := math.Abs(secure.wer-plain.wer) * float64(nwords); diff > 1.01 {
				t.Errorf("SRTP WER %.3f, plain %.3f: %.1f words apart, at most one", secure.wer, plain.wer, diff)
			}
			if secure.seen < 400 {
				t.Errorf("captured %d datagrams of the SRTP call, want its RTP", secure.seen)
			}
			if secure.clear != 0 {
				t.Errorf("%d datagrams of the SRTP call hold the clip's clear audio", secure.clear)
			}
			if p.name == "PCMU" && plain.clear < 100 {
				t.Errorf("the plain call's capture holds the clip's clear G.711 in %d datagrams: the capture does not see it", plain.clear)
			}
		})
	}
	t.Run("PlainToMandatory488", func(t *testing.T) {
		out := baresipSRTP(t, "sip:secure@"+addr, "PCMU/8000/1", "", wav8, 8000, 6*time.Second, false)
		if !strings.Contains(out, "488") {
			t.Fatalf("no 488:\n%s", out)
		}
		d.WaitLog(5*time.Second, `"msg":"sip call refused"`, `"status":488`, "plain RTP/AVP; the route has srtp: mandatory")
	})
	t.Run("SDESOverUDP488", func(t *testing.T) {
		out := baresipSRTP(t, "sip:strict@"+addr, "PCMU/8000/1", "srtp-mand", wav8, 8000, 6*time.Second, false)
		if !strings.Contains(out, "488") {
			t.Fatalf("no 488:\n%s", out)
		}
		d.WaitLog(5*time.Second, `"msg":"sip call refused"`, `"status":488`, "SDES keys over UDP, not TLS")
	})
}

// sipSRTPTLSConfig is the production setting: SIP over TLS (certificate
// and key filled in), a route requiring SRTP without the lab flag.
const sipSRTPTLSConfig = `
sip:
  listen: 127.0.0.1:0
  tls_listen: 127.0.0.1:0
  tls_cert: %s
  tls_key: %s
  rtp_ports: 31880-31919
  max_calls: 4
  allow: [127.0.0.0/8]
  routes:
    - user: secure
      account: acme
      srtp: mandatory
      live: {custom_metadata: {call: secure}}
`

// TestSIPSRTPOverTLSBaresip: on a route with srtp: mandatory and no
// allow_sdes_without_tls, real baresip's SDES offer is answered when it
// comes over SIP/TLS (the keys never cross the network in clear) and
// transcribed, and the same offer over UDP gets 488.
func TestSIPSRTPOverTLSBaresip(t *testing.T) {
	d, addr, tlsAddr, certFile := startSIPTLSDaemon(t, sipSRTPTLSConfig)
	key := createKey(t, d.DataDir, "acme")
	wav16, ref := clip(t, codecClip)
	wav8 := narrowband(t, wav16)
	baresipSRTP(t, "sip:secure@"+addr, "PCMU/8000/1", "srtp-mand", wav8, 8000, 6*time.Second, false)
	d.WaitLog(5*time.Second, `"msg":"sip call refused"`, `"status":488`, "SDES keys over UDP, not TLS")
	baresipSRTP(t, "sip:secure@"+tlsAddr+";transport=tls", "PCMU/8000/1", "srtp-mand", wav8, 8000, 16*time.Second, true, "sip_cafile "+certFile)
	d.WaitLog(5*time.Second, `"msg":"sip call answered"`, `"srtp":"AES_CM_128_HMAC_SHA1_80"`, `"transport":"TLS"`)
	job := liveJobByMetadata(t, d, key, "call", "secure", 60*time.Second)
	if job["status"] != "done" {
		t.Fatalf("job %v", job["status"])
	}
	got := fullTranscript(job)
	wer := recognizertest.WER(ref, got)
	t.Logf("baresip SIP/TLS + SRTP: WER %.3f %q", wer, got)
	if wer > werBaresipPCMU {
		t.Errorf("WER %.3f > %.3f", wer, werBaresipPCMU)
	}
}

// TestSIPDTLSSRTPBaresip: real baresip with its dtls_srtp module
// (mediaenc=dtls_srtp, rtcp_mux yes: UDP/TLS/RTP/SAVPF with a=fingerprint
// and a=setup:actpass) calling over SIP/TLS a route with srtp: mandatory:
// the door answers passive with its fingerprint, the DTLS handshake on the
// RTP port agrees the keys, and the call is decrypted and transcribed
// within the plain calls' bound; a capture of the loopback finds none of
// the clip's clear G.711. The same offer over UDP is refused 488 (its
// fingerprint would cross the network unprotected).
func TestSIPDTLSSRTPBaresip(t *testing.T) {
	d, addr, tlsAddr, certFile := startSIPTLSDaemon(t, sipSRTPTLSConfig)
	key := createKey(t, d.DataDir, "acme")
	wav16, ref := clip(t, codecClip)
	wav8 := narrowband(t, wav16)
	dtlsModule := []string{"module dtls_srtp.so", "rtcp_mux yes"}
	baresipSRTP(t, "sip:secure@"+addr, "PCMU/8000/1", "dtls_srtp", wav8, 8000, 6*time.Second, false, dtlsModule...)
	d.WaitLog(5*time.Second, `"msg":"sip call refused"`, `"status":488`, "DTLS-SRTP with its fingerprint over UDP, not TLS")

	mulaw, _ := g711(t, codecClip, "mulaw")
	var clear atomic.Int64
	cap := startLoopCapture(t, 31880, 31919, clearCounter(clearWindows(mulaw), &clear))
	baresipSRTP(t, "sip:secure@"+tlsAddr+";transport=tls", "PCMU/8000/1", "dtls_srtp", wav8, 8000, 16*time.Second, true,
		append(dtlsModule, "sip_cafile "+certFile)...)
	cap.stop()
	d.WaitLog(5*time.Second, `"msg":"sip call answered"`, `"srtp":"DTLS-SRTP"`, `"transport":"TLS"`)
	d.WaitLog(5*time.Second, `"msg":"dtls-srtp established"`)
	job := liveJobByMetadata(t, d, key, "call", "secure", 60*time.Second)
	if job["status"] != "done" {
		t.Fatalf("job %v", job["status"])
	}
	got := fullTranscript(job)
	wer := recognizertest.WER(ref, got)
	t.Logf("baresip SIP/TLS + DTLS-SRTP: WER %.3f, %d of %d captured datagrams hold clear audio: %q", wer, clear.Load(), cap.seen.Load(), got)
	if wer > werBaresipPCMU {
		t.Errorf("WER %.3f > %.3f", wer, werBaresipPCMU)
	}
	if cap.seen.Load() < 400 {
		t.Errorf("captured %d datagrams of the call, want its RTP", cap.seen.Load())
	}
	if clear.Load() != 0 {
		t.Errorf("%d datagrams of the DTLS-SRTP call hold the clip's clear audio", clear.Load())
	}
}
