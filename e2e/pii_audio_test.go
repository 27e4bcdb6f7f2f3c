package e2e

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fasthttp/websocket"

	"github.com/earshot-dev/earshot/store/postgres/pgtest"
)

// piiName is the clip of the PII audio tests and what it holds: Sense and
// Sensibility 0870 ("and mister john dashwood had then leisure..."), which
// the embedded engine writes "and mr john ...": "john" is a NAME of the
// gazetteer, redacted by the default preset (GDPR).
const (
	piiClip  = "librivox-sense-and-sensibility-01-0870.wav"
	piiValue = "john"
)

// piiGuard is the margin the appliance blanks beside an entity's words
// (pii.AudioGuard); the checks leave a little more room on each side.
const piiGuard = 0.08

// getFile downloads a job's audio and returns its content type and body.
func getFile(t *testing.T, d *daemonProc, key, path string) (string, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", d.Base+path, nil)
	req.Header.Set("x-service-key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v %.200s", path, resp.StatusCode, err, b)
	}
	return resp.Header.Get("Content-Type"), b
}

// redactedWords are the marker words of a record's utterances ("[NAME]"
// ...), with their times: what was redacted, where.
func redactedWords(t *testing.T, rec map[string]any) []pauseSpan {
	t.Helper()
	return recordWordsWhere(rec, func(w string) bool { return strings.HasPrefix(w, "[") })
}

// checkNoValue fails when what (a record or a callback body) holds the
// redacted value anywhere.
func checkNoValue(t *testing.T, where string, what []byte) {
	t.Helper()
	if bytes.Contains(bytes.ToLower(what), []byte(piiValue)) {
		i := bytes.Index(bytes.ToLower(what), []byte(piiValue))
		t.Errorf("the redacted value %q is in %s: ...%s...", piiValue, where, what[max(0, i-80):min(len(what), i+80)])
	}
}

// TestPIIAudioRedactionPreRecorded uploads real speech holding a name
// (as FLAC: the stored upload is not a WAV) and runs pre-recorded jobs with
// pii_redaction and a callback_url to a local receiver. With the default
// audio (silence) the job's file (GET .../file) is a 16-bit PCM WAV at
// 16 kHz (audio/wav), as long as the clip, digital silence (RMS 0) over
// the redacted word's span from the record's words, and the clip's own
// samples outside the guarded span (speech is heard there); the value
// appears nowhere in the record nor in the callback's body. With audio
// tone the span holds the 1 kHz tone at -20 dBFS; with audio off the file
// is the upload, byte for byte. On the embedded store and on PostgreSQL.
func TestPIIAudioRedactionPreRecorded(t *testing.T) {
	for _, backend := range []string{"bbolt", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			d, key := piiDaemon(t, backend)
			hook, hookURL := startHookReceiver(t)
			wavPath, _ := clip(t, piiClip)
			clipSamples := wavSamples(t, mustRead(t, wavPath))
			flac := filepath.Join(t.TempDir(), "call.flac")
			if out, err := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-i", wavPath, "-c:a", "flac", flac).CombinedOutput(); err != nil {
				t.Fatalf("ffmpeg: %v %s", err, out)
			}
			status, up, b := d.upload(key, flac)
			if status != 200 {
				t.Fatalf("upload: %d %s", status, b)
			}
			run := func(audio string) (map[string]any, []byte) {
				t.Helper()
				body := map[string]any{"audio_url": up.AudioURL, "pii_redaction": true, "callback_url": hookURL}
				if audio != "" {
					body["pii_redaction_config"] = map[string]any{"audio": audio}
				}
				var created struct{ ID string }
				if status, b := d.postJSON("/v2/pre-recorded", key, body, &created); status != 201 {
					t.Fatalf("POST /v2/pre-recorded: %d %s", status, b)
				}
				rec := d.waitJob(key, created.ID, time.Minute)
				if rec["status"] != "done" {
					t.Fatalf("job %v: %v", rec["status"], rec)
				}
				_, raw := d.do("GET", "/v2/pre-recorded/"+created.ID, key, nil, "", nil)
				return rec, raw
			}

			rec, raw := run("")
			id := rec["id"].(string)
			if backend == "bbolt" {
				// The job's own name for the audio (a link to the upload) is gone.
				if _, err := os.Stat(filepath.Join(d.DataDir, "blobs", "job-"+id)); !os.IsNotExist(err) {
					t.Errorf("the job's original audio is still on disk: %v", err)
				}
			}
			checkNoValue(t, "the record", raw)
			spans := redactedWords(t, rec)
			if len(spans) != 1 {
				t.Fatalf("redacted words %v, want the one name (record %s)", spans, raw)
			}
			name := spans[0]
			ctype, wav := getFile(t, d, key, "/v2/pre-recorded/"+id+"/file")
			if ctype != "audio/wav" || string(wav[:4]) != "RIFF" || string(wav[8:12]) != "WAVE" {
				t.Fatalf("file: %s %q, want a WAV", ctype, wav[:min(12, len(wav))])
			}
			if ch, rate, bits := binary.LittleEndian.Uint16(wav[22:]), binary.LittleEndian.Uint32(wav[24:]), binary.LittleEndian.Uint16(wav[34:]); ch != 1 || rate != 16000 || bits != 16 {
				t.Fatalf("file: %d channels %d Hz %d bits, want 1, 16000, 16", ch, rate, bits)
			}
			got := wavSamples(t, wav)
			if len(got) != len(clipSamples) {
				t.Fatalf("file has %d samples, the clip %d", len(got), len(clipSamples))
			}
			if r := rmsOver(clipSamples, name.Start, name.End); r < 300 {
				t.Fatalf("the clip has no speech over the name %v (RMS %.0f): the test would prove nothing", name, r)
			}
			if r := rmsOver(got, name.Start-piiGuard+0.005, name.End+piiGuard-0.005); r != 0 {
				t.Errorf("file RMS %.1f over the name's words %v, want digital silence", r, name)
			}
			for i := range got {
				s := float64(i) / 16000
				if s > name.Start-piiGuard-0.01 && s < name.End+piiGuard+0.01 {
					continue
				}
				if got[i] != clipSamples[i] {
					t.Fatalf("file differs from the clip at %.4f s, outside the redacted span %v", s, name)
				}
			}
			if r := rmsOver(got, name.End+0.2, 6.5); r < 300 {
				t.Errorf("file RMS %.0f after the name: the speech elsewhere was silenced", r)
			}
			hook.waitEvent(t, id, "transcription.success", 30*time.Second)
			hook.mu.Lock()
			for _, h := range hook.got {
				checkNoValue(t, "a callback body", h.body)
			}
			hook.mu.Unlock()

			rec, _ = run("tone")
			_, wav = getFile(t, d, key, "/v2/pre-recorded/"+rec["id"].(string)+"/file")
			tone := rmsOver(wavSamples(t, wav), name.Start-piiGuard+0.005, name.End+piiGuard-0.005)
			if tone < 2200 || tone > 2440 {
				t.Errorf("tone: file RMS %.0f over the name, want about %.0f (1 kHz at -20 dBFS)", tone, 0.1*32767/1.4142)
			}
			t.Logf("name at %v: RMS %.0f in the clip, 0 in the redacted file, %.0f with the tone", name, rmsOver(clipSamples, name.Start, name.End), tone)

			rec, _ = run("off")
			ctype, wav = getFile(t, d, key, "/v2/pre-recorded/"+rec["id"].(string)+"/file")
			if !bytes.Equal(wav, mustRead(t, flac)) || strings.Contains(ctype, "wav") {
				t.Errorf("audio off: the file (%s, %d bytes) is not the upload", ctype, len(wav))
			}
		})
	}
}

// piiDaemon starts a daemon on the embedded store (bbolt) or on a
// throwaway PostgreSQL (postgres: one node of a cluster, no fixed ports)
// and returns it with a key of account acme.
func piiDaemon(t *testing.T, backend string) (*daemonProc, string) {
	t.Helper()
	if backend == "bbolt" {
		d := startDaemon(t, "", "")
		return d, createKey(t, d.DataDir, "acme")
	}
	d := startDaemon(t, "", clusterConfig(pgtest.StartDatabase(t), "node-a"))
	admin := createClusterKey(t, d, "admin")
	var key adminKey
	if status, body := d.postJSON("/admin/keys", admin, map[string]any{"account": "acme"}, &key); status != 201 {
		t.Fatalf("POST /admin/keys: %d %s", status, body)
	}
	return d, key.Key
}

// markerSpans are the marker words ("[NAME]" ...) of the final transcript
// messages, with their times.
func markerSpans(t *testing.T, msgs []liveMsg) []pauseSpan {
	t.Helper()
	return messageWordsWhere(t, msgs, func(final bool, w string) bool { return final && strings.HasPrefix(w, "[") })
}

// TestPIIAudioRedactionLive streams real speech holding a name over the
// WebSocket to a session with pii_redaction (an earshot extension of the
// live body), partial transcripts on and every message also sent to a
// callback: no message received (partials included), no entry of the
// stored record (result.messages, the batch pass's result) and no callback
// body holds the name, while a final carries its marker; the stored
// recording (GET /v2/live/{id}/file) is digital silence over the marker's
// words (those of the live finals and of the stored record) and the clip's
// speech elsewhere. Once with the batch pass (whose result has its
// pii_redaction envelope), once without it: the session's end alone
// blanks the recording.
func TestPIIAudioRedactionLive(t *testing.T) {
	for _, batch := range []bool{true, false} {
		t.Run(map[bool]string{true: "batch pass", false: "live only"}[batch], func(t *testing.T) {
			config := ""
			if !batch {
				config = "live:\n  batch_pass: false\n"
			}
			liveRedaction(t, startDaemon(t, "", config), batch, map[string]any{"audio": "silence"})
		})
	}
}

// liveRedaction is TestPIIAudioRedactionLive on daemon d, whose batch
// pass is on when batch is, the session's pii_redaction_config config.
func liveRedaction(t *testing.T, d *daemonProc, batch bool, config map[string]any) {
	key := createKey(t, d.DataDir, "acme")
	hook, hookURL := startHookReceiver(t)
	path, _ := clip(t, piiClip)
	audio := pcmOf(t, path)
	clipSamples := wavSamples(t, mustRead(t, path))

	all := map[string]any{"receive_partial_transcripts": true, "receive_lifecycle_events": true}
	cb := map[string]any{"url": hookURL}
	for k, v := range all {
		cb[k] = v
	}
	s := d.createLive(key, map[string]any{"pii_redaction": true, "pii_redaction_config": config, "messages_config": all, "callback": true, "callback_config": cb})
	c, err := dial(t, s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := readLive(t, c)
	for i := 0; i < len(audio); i += 3200 { // 100 ms frames, as fast as the session takes them
		if err := c.WriteMessage(websocket.BinaryMessage, audio[i:min(i+3200, len(audio))]); err != nil {
			t.Fatal(err)
		}
	}
	r.waitAcked(t, int64(len(audio)))
	if err := c.WriteJSON(map[string]any{"type": "stop_recording"}); err != nil {
		t.Fatal(err)
	}
	<-r.done
	if r.code != 1000 {
		t.Fatalf("socket closed %d", r.code)
	}
	a := loadAPIDoc(t, mustRead(t, openAPIFile))
	for _, m := range r.all {
		checkNoValue(t, "a live message", m.raw)
		a.checkMessage(t, "WebSocket", m.raw)
	}
	live := markerSpans(t, r.all)
	if len(live) == 0 {
		t.Fatalf("no final carries a marker: the live transcript did not hold the name, the test would prove nothing")
	}

	rec := d.waitLive(key, s.ID, time.Minute)
	if batch {
		rec = waitBatchPass(t, d, key, s.ID)
	}
	env, _ := rec["result"].(map[string]any)["pii_redaction"].(map[string]any)
	if list, _ := env["results"].([]any); env["success"] != true || !batch && len(list) != len(live) {
		t.Errorf("the result's pii_redaction envelope %v, live markers %v", env, live)
	}
	_, raw := d.do("GET", "/v2/live/"+s.ID, key, nil, "", nil)
	checkNoValue(t, "the record", raw)
	hook.waitEvent(t, s.ID, "live.end_session", 30*time.Second)
	hook.mu.Lock()
	for _, h := range hook.got {
		checkNoValue(t, "a callback body", h.body)
	}
	hook.mu.Unlock()

	_, wav := getFile(t, d, key, "/v2/live/"+s.ID+"/file")
	got := wavSamples(t, wav)
	if len(got) != len(clipSamples) {
		t.Fatalf("recording has %d samples, the clip %d", len(got), len(clipSamples))
	}
	spans := append(live, redactedWords(t, rec)...)
	for _, sp := range spans {
		if r := rmsOver(clipSamples, sp.Start, sp.End); r < 300 {
			t.Errorf("the clip has no speech over the marker %v (RMS %.0f)", sp, r)
		}
		if r := rmsOver(got, sp.Start-piiGuard+0.005, sp.End+piiGuard-0.005); r != 0 {
			t.Errorf("recording RMS %.1f over the redacted words %v, want digital silence", r, sp)
		}
	}
	if r := rmsOver(got, 2.0, 6.5); r < 300 {
		t.Errorf("recording RMS %.0f over 2.0-6.5 s: the speech elsewhere was silenced", r)
	}
	t.Logf("redacted spans: live %v, record %v", live, redactedWords(t, rec))
}
