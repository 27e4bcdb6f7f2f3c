// Command codecbench measures the word error rate of live sessions through
// the two call doors, per codec, with real clients and a real earshotd:
// Debian's baresip places SIP calls in PCMU, PCMA and G.722, and headless
// Chromium (playwright-core, e2e/testdata/whip_browser.cjs) sends WHIP
// sessions in PCMU and Opus. Every mono clip of shared/testdata/speech up to
// -max-seconds is sent once per codec, in real time, one session at a time;
// the table gives each path's corpus WER (word errors over reference words)
// of the live finals (the session's final transcript messages, kept in
// result.messages) and of its stored record once the batch pass has
// replaced it (the batch pass over the recording the door made, stretch by
// stretch combined with the live finals), the gap between the two (issue
// 14's "live finals within 2 points of batch, through each door"), and
// the recording itself sent as a pre-recorded job (a batch decode of the
// same audio through the pre-recorded door): issue 41's "stored record <=
// min(live, batch) on every door row" (since 2026-12-01; before, the table
// had no batch column of its own and showed the record against the live
// finals only).
//
//	go run ./bench/cmd/codecbench [-speech DIR] [-max-seconds 12] [-node-modules DIR]
//
// G.711 calls from baresip play an 8 kHz rendition made by ffmpeg (a phone
// samples at 8 kHz; baresip 1.0's own resampler aliases), G.722 calls and
// Chromium the 16 kHz clip. Run from the repository root.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/earshot-dev/earshot/bench/internal/benchd"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// path is one door and codec measured.
type path struct {
	name   string // table label
	door   string // "sip" or "whip"
	codecs string // baresip: account audio_codecs; whip: the mime type offered
	narrow bool   // plays the 8 kHz rendition (baresip G.711)
	format string // whip: the session's POST /v2/live format
	// session is the live session's format, as the table says it.
	session string
}

var paths = []path{
	{name: "SIP baresip PCMU", door: "sip", codecs: "PCMU/8000/1", narrow: true, session: "wav/ulaw 8 kHz"},
	{name: "SIP baresip PCMA", door: "sip", codecs: "PCMA/8000/1", narrow: true, session: "wav/alaw 8 kHz"},
	{name: "SIP baresip G.722 (offered after PCMU, PCMA)", door: "sip", codecs: "PCMU/8000/1,PCMA/8000/1,G722/16000/1", session: "wav/pcm 16 kHz"},
	{name: "WHIP Chromium PCMU", door: "whip", codecs: "audio/pcmu", session: "wav/ulaw 8 kHz",
		format: `{"encoding":"wav/ulaw","bit_depth":8,"sample_rate":8000,"channels":1}`},
	{name: "WHIP Chromium Opus", door: "whip", codecs: "audio/opus", session: "wav/pcm 16 kHz",
		format: `{"encoding":"wav/pcm","bit_depth":16,"sample_rate":16000,"channels":1}`},
}

func main() {
	speech := flag.String("speech", "", "speech test set directory (default: shared/testdata/speech found above the working directory)")
	maxSeconds := flag.Float64("max-seconds", 12, "longest clip sent")
	modules := flag.String("node-modules", "bin/e2e-node/node_modules", "where playwright-core is installed (make test-deps)")
	only := flag.String("paths", "", "measure only the paths whose name contains this (e.g. WHIP); all when empty")
	dump := flag.String("dump", "", "diagnosis: write each session's reference, live finals, record, recording and its pre-recorded transcript to this directory")
	flag.Parse()
	if err := run(*speech, *maxSeconds, *modules, *only, *dump); err != nil {
		fmt.Fprintln(os.Stderr, "codecbench:", err)
		os.Exit(1)
	}
}

type clip struct {
	recognizertest.Clip
	narrow string // 8 kHz rendition
}

func run(speechDir string, maxSeconds float64, modules, only, dump string) error {
	if speechDir == "" {
		d, err := recognizertest.LocateSpeechDir()
		if err != nil {
			return err
		}
		speechDir = d
	}
	f, err := os.Open(filepath.Join(speechDir, "manifest.tsv"))
	if err != nil {
		return err
	}
	all, err := recognizertest.ParseManifest(f, speechDir)
	f.Close()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "codecbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var clips []clip
	var audio float64
	for _, c := range all {
		if c.Duration > maxSeconds || channels(c.Path) != 1 {
			continue // a call door carries one channel a stream
		}
		n := filepath.Join(tmp, fmt.Sprintf("%d-8k.wav", len(clips)))
		if out, err := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-i", c.Path, "-ar", "8000", "-ac", "1", n).CombinedOutput(); err != nil {
			return fmt.Errorf("ffmpeg: %v %s", err, out)
		}
		clips = append(clips, clip{Clip: c, narrow: n})
		audio += c.Duration
	}
	sipAddr, err := freeAddr()
	if err != nil {
		return err
	}
	cfg := fmt.Sprintf("sip:\n  listen: %s\n  rtp_ports: 34000-34099\n  allow: [127.0.0.0/8]\n  routes:\n    - user: bench\n      account: bench\n"+
		"webrtc:\n  include_loopback: true\n  udp_ports: \"34100-34199\"\n", sipAddr)
	d, err := benchd.Start(cfg)
	if err != nil {
		return err
	}
	defer d.Stop()
	b := &bench{d: d, sip: sipAddr, tmp: tmp, modules: modules}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("%d clips (%.0f s of speech) per path, each sent once in real time, one session at a time; load average at start %s\n\n",
		len(clips), audio, strings.Join(strings.Fields(string(load))[:3], " "))
	fmt.Println("| path | session | words | live finals: word errors | live finals WER | stored record (batch pass) WER | gap points | recording as a pre-recorded job WER | record <= min(live, pre-recorded) |")
	fmt.Println("|---|---|---:|---:|---:|---:|---:|---:|---|")
	for _, p := range paths {
		if !strings.Contains(p.name, only) {
			continue
		}
		liveErrs, batchErrs, preErrs, words := 0, 0, 0, 0
		for _, c := range clips {
			id, err := b.send(p, c)
			if err != nil {
				return fmt.Errorf("%s, %s: %w", p.name, c.File, err)
			}
			rec, err := d.BatchPassRecord(id, 5*time.Minute)
			if err != nil {
				return fmt.Errorf("%s, %s: %w", p.name, c.File, err)
			}
			rw := recognizertest.Normalize(c.Transcript)
			audio, pre, err := b.preRecorded(p, c, id)
			if err != nil {
				return fmt.Errorf("%s, %s: the recording as a pre-recorded job: %w", p.name, c.File, err)
			}
			if dump != "" {
				if err := b.dump(dump, p, c, id, rec, audio, pre); err != nil {
					return fmt.Errorf("%s, %s: dump: %w", p.name, c.File, err)
				}
			}
			liveErrs += recognizertest.EditDistance(rw, recognizertest.Normalize(strings.Join(rec.Finals, " ")))
			batchErrs += recognizertest.EditDistance(rw, recognizertest.Normalize(rec.FullTranscript))
			preErrs += recognizertest.EditDistance(rw, recognizertest.Normalize(pre))
			words += len(rw)
		}
		n := float64(max(words, 1))
		met := "met"
		if batchErrs > min(liveErrs, preErrs) {
			met = fmt.Sprintf("missed by %d words", batchErrs-min(liveErrs, preErrs))
		}
		fmt.Printf("| %s | %s | %d | %d | %.3f | %.3f | %+.2f | %.3f | %s |\n", p.name, p.session, words, liveErrs,
			float64(liveErrs)/n, float64(batchErrs)/n, 100*float64(liveErrs-batchErrs)/n, float64(preErrs)/n, met)
	}
	return nil
}

// bench is a running daemon and where the clients find their files.
type bench struct {
	d       *benchd.Daemon
	sip     string // the SIP door's address
	tmp     string
	modules string
}

// send sends one clip through one path and returns the finished
// session's ID.
func (b *bench) send(p path, c clip) (string, error) {
	d := b.d
	wav, rate := c.Path, 16000
	if p.narrow {
		wav, rate = c.narrow, 8000
	}
	if p.door == "sip" {
		before, err := liveIDs(d)
		if err != nil {
			return "", err
		}
		if err := b.baresip(p.codecs, wav, rate, c.Duration); err != nil {
			return "", err
		}
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) {
			ids, err := liveIDs(d)
			if err != nil {
				return "", err
			}
			for _, id := range ids {
				if !contains(before, id) {
					return id, nil
				}
			}
			time.Sleep(200 * time.Millisecond)
		}
		return "", errors.New("the call left no finished live job")
	}
	var s struct {
		ID, URL string
	}
	if err := d.Call("POST", "/v2/live", d.Key, p.format, 201, &s); err != nil {
		return "", err
	}
	tok := s.URL[strings.Index(s.URL, "token=")+len("token="):]
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(c.Duration*float64(time.Second))+2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "e2e/testdata/whip_browser.cjs", d.Base, s.ID, tok, wav, p.codecs, fmt.Sprint(c.Duration+1.5))
	abs, _ := filepath.Abs(b.modules)
	cmd.Env = append(os.Environ(), "NODE_PATH="+abs)
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("browser: %w", err)
	}
	var seen struct {
		Status       int `json:"status"`
		DeleteStatus int `json:"delete_status"`
	}
	if err := json.Unmarshal(out, &seen); err != nil || seen.Status != 201 || seen.DeleteStatus != 200 {
		return "", fmt.Errorf("browser saw %s", out)
	}
	return s.ID, nil
}

// baresip places one call to the daemon's bench route and returns when
// baresip has hung up (at the end of the file) and quit.
func (b *bench) baresip(codecs, wav string, rate int, seconds float64) error {
	dir, err := os.MkdirTemp(b.tmp, "baresip-")
	if err != nil {
		return err
	}
	config := fmt.Sprintf("poll_method poll\nsip_listen 127.0.0.1:0\naudio_source aufile,%s\naudio_player aufile,/dev/null\naudio_alert aufile,/dev/null\n"+
		"ausrc_srate %d\nauplay_srate %d\nmodule_path /usr/lib/baresip/modules\nmodule g711.so\nmodule g722.so\nmodule aufile.so\n"+
		"module_app account.so\nmodule_app menu.so\n", wav, rate, rate)
	if err := os.WriteFile(filepath.Join(dir, "config"), []byte(config), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "accounts"), []byte("<sip:phone@127.0.0.1>;regint=0;audio_codecs="+codecs+"\n"), 0o600); err != nil {
		return err
	}
	out, err := exec.Command("baresip", "-f", dir, "-e", "/dial sip:bench@"+b.sip, "-t", fmt.Sprint(int(seconds)+5)).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "terminated") {
		return fmt.Errorf("baresip: %v\n%s", err, out)
	}
	return nil
}

// freeAddr is a loopback address free for both UDP and TCP just now.
func freeAddr() (string, error) {
	for range 20 {
		u, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			return "", err
		}
		addr := u.LocalAddr().String()
		tc, err := net.Listen("tcp", addr)
		u.Close()
		if err == nil {
			tc.Close()
			return addr, nil
		}
	}
	return "", errors.New("no free port for the SIP door")
}

// liveIDs are the finished live jobs.
func liveIDs(d *benchd.Daemon) ([]string, error) {
	var page struct {
		Items []struct{ ID, Status string } `json:"items"`
	}
	if err := d.Call("GET", "/v2/live?limit=100", d.Key, "", 200, &page); err != nil {
		return nil, err
	}
	var ids []string
	for _, it := range page.Items {
		if it.Status == "done" || it.Status == "error" {
			ids = append(ids, it.ID)
		}
	}
	return ids, nil
}

func contains(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// channels is a WAV file's channel count (0 when unreadable).
func channels(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	var h [24]byte
	if _, err := io.ReadFull(f, h[:]); err != nil || string(h[:4]) != "RIFF" {
		return 0
	}
	return int(h[22]) | int(h[23])<<8
}
