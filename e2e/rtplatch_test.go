package e2e

import (
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// rtpLatchConfig is a door whose calls come from 127.0.0.0/8.
const rtpLatchConfig = `
sip:
  listen: 127.0.0.1:0
  rtp_ports: 31600-31679
  allow: [127.0.0.0/8]
  routes:
    - user: latch
      account: acme
      live: {custom_metadata: {call: latch}}
`

// hostAddr is an up non-loopback IPv4 address of this machine: what a phone
// advertises in its SDP when it does not know better.
func hostAddr(t *testing.T) string {
	t.Helper()
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, ifc := range ifs {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil {
				return n.IP.String()
			}
		}
	}
	t.Fatal("needs an up non-loopback IPv4 interface (the address baresip advertises)")
	return ""
}

// TestSIPRTPLatching places a real baresip call whose three addresses all
// differ, as behind NAT or a proxy: the INVITE comes from 127.0.0.2, the
// SDP's c= names the host's interface address, and the RTP comes from
// 127.0.0.1. The door latches onto the RTP's source (symmetric RTP) and
// transcribes the call as a direct one. Before latching the door dropped
// every packet: no audio, WER 1.0.
func TestSIPRTPLatching(t *testing.T) {
	d, addr := startSIPDaemon(t, telephoneModel(t)+rtpLatchConfig)
	key := createKey(t, d.DataDir, "acme")
	wav16, ref := clip(t, codecClip)
	wav8 := narrowband(t, wav16)
	advertised := hostAddr(t)
	baresip(t, "sip:latch@"+addr, "PCMU/8000/1", wav8, 8000, 16*time.Second,
		"sip_listen 127.0.0.2:0", "net_interface "+advertised)
	job := liveJobByMetadata(t, d, key, "call", "latch", 60*time.Second)
	if job["status"] != "done" {
		t.Fatalf("job %v", job["status"])
	}
	ended := d.WaitLog(5*time.Second, `"msg":"sip call ended"`)
	t.Log(ended)
	got := fullTranscript(job)
	wer := recognizertest.WER(ref, got)
	t.Logf("baresip PCMU, SDP %s, RTP from 127.0.0.1: WER %.3f %q", advertised, wer, got)
	if wer > werBaresipPCMU {
		t.Errorf("WER %.3f > %.3f; %s", wer, werBaresipPCMU, ended)
	}
	latched := d.WaitLog(5*time.Second, `"msg":"rtp source latched"`)
	for _, want := range []string{`"expected":"` + advertised, `"actual":"127.0.0.1:`} {
		if !strings.Contains(latched, want) {
			t.Errorf("latch line lacks %s: %s", want, latched)
		}
	}
	if n := d.logCount(`"msg":"sip call received no audio"`); n != 0 {
		t.Errorf("%d calls logged no audio", n)
	}
	if v := d.metric("earshot_rtp_latched_total"); v != 1 {
		t.Errorf("earshot_rtp_latched_total = %v, want 1", v)
	}
	if v := d.metric("earshot_sip_calls_without_audio_total"); v != 0 {
		t.Errorf("earshot_sip_calls_without_audio_total = %v, want 0", v)
	}
}

// TestSIPRTPLatchingOff: with sip.rtp_latching false the same call's RTP
// is dropped, and the door says so: a warning naming the expected and the
// actual source, one naming the call that received no audio, and their
// metrics.
func TestSIPRTPLatchingOff(t *testing.T) {
	d, addr := startSIPDaemon(t, telephoneModel(t)+rtpLatchConfig+"  rtp_latching: false\n")
	key := createKey(t, d.DataDir, "acme")
	wav16, _ := clip(t, codecClip)
	wav8 := filepath.Join(t.TempDir(), "clip8k.wav")
	if b, err := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-i", wav16, "-t", "3", "-ar", "8000", "-ac", "1", wav8).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v %s", err, b)
	}
	advertised := hostAddr(t)
	baresip(t, "sip:latch@"+addr, "PCMU/8000/1", wav8, 8000, 8*time.Second,
		"sip_listen 127.0.0.2:0", "net_interface "+advertised)
	liveJobByMetadata(t, d, key, "call", "latch", 60*time.Second)
	dropped := d.WaitLog(5*time.Second, `"msg":"rtp from unexpected source dropped"`)
	for _, want := range []string{`"level":"WARN"`, `"call_id":`, `"expected":"` + advertised + `:`, `"actual":"127.0.0.1:`} {
		if !strings.Contains(dropped, want) {
			t.Errorf("drop line lacks %s: %s", want, dropped)
		}
	}
	silent := d.WaitLog(5*time.Second, `"msg":"sip call received no audio"`)
	if !strings.Contains(silent, `"level":"WARN"`) || !strings.Contains(silent, `"expected":"`+advertised+`:`) {
		t.Errorf("no-audio line: %s", silent)
	}
	if n := d.logCount(`"msg":"rtp source latched"`); n != 0 {
		t.Errorf("%d streams latched with latching off", n)
	}
	if v := d.metric("earshot_rtp_foreign_packets_total"); v < 50 {
		t.Errorf("earshot_rtp_foreign_packets_total = %v, want the call's packets (3 s: about 150)", v)
	}
	if v := d.metric("earshot_sip_calls_without_audio_total"); v != 1 {
		t.Errorf("earshot_sip_calls_without_audio_total = %v, want 1", v)
	}
	if v := d.metric("earshot_rtp_latched_total"); v != 0 {
		t.Errorf("earshot_rtp_latched_total = %v, want 0", v)
	}
}
