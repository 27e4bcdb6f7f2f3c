package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
)

// sealedConfig makes a data key with `earshotd keys generate-data-key` and
// returns a config naming it.
func sealedConfig(t *testing.T) (string, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "data-key")
	if out, err := exec.Command(earshotd, "keys", "generate-data-key", path).CombinedOutput(); err != nil {
		t.Fatalf("generate-data-key: %v %s", err, out)
	}
	return path, "store:\n  encryption_key_file: " + path + "\n"
}

// audioRuns returns the 64-byte runs of b at every 64th offset that are
// not near-constant (silence would match any zeroed page).
func audioRuns(b []byte) map[string]bool {
	runs := map[string]bool{}
	for i := 44; i+64 <= len(b); i += 64 {
		w := b[i : i+64]
		distinct := map[byte]bool{}
		for _, c := range w {
			distinct[c] = true
		}
		if len(distinct) >= 16 {
			runs[string(w)] = true
		}
	}
	return runs
}

// asciiLower is b with ASCII letters lower-cased and every other byte as
// it is (bytes.ToLower turns each byte of a binary file that is not UTF-8
// into three, moving the offsets).
func asciiLower(b []byte) []byte {
	low := make([]byte, len(b))
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		low[i] = c
	}
	return low
}

// clearWord returns the offset of the first occurrence of w in low (a
// file's bytes, lower-cased) as a word of text, not inside a run of the
// base64url alphabet that sealed values are written in, or -1. A 5-letter
// word turned up inside the sealed values' base64 in about one run in a
// hundred (case folded, each letter matches 2 of the 64 characters: 3e-8
// per offset, against about 60 KB of base64 in a call's earshot.db): e2e
// TestSIPSealedBaresip failed so in a clean-clone run (2026-11-30, "there").
func clearWord(low []byte, w string) int {
	inB64 := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_'
	}
	for off := 0; ; {
		i := bytes.Index(low[off:], []byte(w))
		if i < 0 {
			return -1
		}
		at := off + i
		if (at == 0 || !inB64(low[at-1])) && (at+len(w) == len(low) || !inB64(low[at+len(w)])) {
			return at
		}
		off = at + 1
	}
}

// scanDir fails t for every file under dir holding one of words or one of
// runs (a copy of the audio in clear) anywhere.
func scanDir(t *testing.T, dir string, words []string, runs map[string]bool) int {
	t.Helper()
	files := 0
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || !fi.Mode().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		files++
		low := asciiLower(b)
		for _, w := range words {
			if at := clearWord(low, strings.ToLower(w)); at >= 0 {
				t.Errorf("%s holds %q in clear at %d: %q", p, w, at, b[max(0, at-40):min(len(b), at+len(w)+40)])
			}
		}
		scanBase64(t, p, b, words)
		for i := 0; i+64 <= len(b); i++ {
			if runs[string(b[i:i+64])] {
				t.Errorf("%s holds a 64-byte run of the audio at %d", p, i)
				break
			}
		}
		return nil
	})
	return files
}

// scanBase64 fails t for each of words that the file p's content b holds
// in base64 (base64Forms).
func scanBase64(t *testing.T, p string, b []byte, words []string) {
	t.Helper()
	for _, w := range words {
		for _, form := range base64Forms(w) {
			if at := bytes.Index(b, []byte(form)); at >= 0 {
				t.Errorf("%s holds %q in base64 at %d: %q", p, w, at, b[max(0, at-40):min(len(b), at+len(form)+40)])
			}
		}
	}
}

// base64Forms returns, for each of the three byte alignments w can start
// at inside a longer text, the part of that text's standard base64 (as
// encoding/json writes a []byte field: a callback's body in the outbox)
// that only w's own bytes decide, when it is at least 12 characters (72
// bits: no chance match in sealed data, itself base64): a clear text that
// a record holds as bytes is found as well as one it holds as text.
func base64Forms(w string) []string {
	var out []string
	for lead := range 3 {
		enc := base64.StdEncoding.EncodeToString(append(make([]byte, lead), w...))
		from := 0
		if lead > 0 {
			from = 4 // the first group mixes the text before w
		}
		to := (lead + len(w)) / 3 * 4 // a last partial group mixes the text after w
		if to-from >= 12 {
			out = append(out, enc[from:to])
		}
	}
	return out
}

// transcriptWords returns the words of 5 letters or more of a job's
// result transcript, and the whole transcript when it has 16 characters
// or more.
func transcriptWords(t *testing.T, rec map[string]any) []string {
	t.Helper()
	b, _ := json.Marshal(rec["result"])
	var r struct {
		Transcription struct {
			FullTranscript string `json:"full_transcript"`
		} `json:"transcription"`
	}
	json.Unmarshal(b, &r)
	var out []string
	for _, w := range strings.Fields(r.Transcription.FullTranscript) {
		if len(w) >= 5 {
			out = append(out, w)
		}
	}
	if len(r.Transcription.FullTranscript) >= 16 { // found in base64 too (scanDir)
		out = append(out, r.Transcription.FullTranscript)
	}
	if len(out) == 0 {
		t.Fatalf("no transcript words in %s", b)
	}
	return out
}

// TestEncryptionAtRest: with store.encryption_key_file, after an upload, a
// pre-recorded job and a live session over the WebSocket, no file of the
// data dir holds a transcript word, the custom metadata or a 64-byte run of
// the uploaded audio; a restart with the key reads every record and the
// audio back identical; without the key the daemon refuses to start,
// naming the setting.
func TestEncryptionAtRest(t *testing.T) {
	_, cfg := sealedConfig(t)
	d := startDaemon(t, "", cfg)
	key := createKey(t, d.DataDir, "acme")
	path, audio, preID := ticketJob(t, d, key, "ZEBRAQUOKKA-77")
	live := d.createLive(key, map[string]any{})
	c, err := dial(t, live.URL)
	if err != nil {
		t.Fatal(err)
	}
	c.WriteMessage(websocket.BinaryMessage, pcmOf(t, path))
	c.WriteJSON(map[string]any{"type": "stop_recording"})
	readAll(t, c, time.Minute)
	c.Close()
	rec := d.waitJob(key, preID, 2*time.Minute)
	if rec["status"] != "done" {
		t.Fatalf("job ended %v", rec)
	}
	words := append(transcriptWords(t, rec), "ZEBRAQUOKKA-77", filepath.Base(path))
	var liveRec map[string]any
	deadline := time.Now().Add(2 * time.Minute)
	for liveRec["status"] != "done" && time.Now().Before(deadline) {
		d.do("GET", "/v2/live/"+live.ID, key, nil, "", &liveRec)
		time.Sleep(100 * time.Millisecond) // polling a real process
	}
	_, fileBefore := d.do("GET", "/v2/pre-recorded/"+preID+"/file", key, nil, "", nil)
	if !bytes.Equal(fileBefore, audio) {
		t.Fatalf("job's audio: %d bytes, want the upload's %d", len(fileBefore), len(audio))
	}
	// The account's callback signing secret (through the admin socket, from
	// the running daemon): kept in the keyring, wrapped, in no file in
	// clear (before 2026-11-30 earshot.db held it).
	secret := accountSecret(t, d.DataDir)
	d.Stop()

	n := scanDir(t, d.DataDir, words, audioRuns(audio))
	t.Logf("scanned %d files of %s for %d words and the audio's runs", n, d.DataDir, len(words))
	scanSecret(t, d.DataDir, secret)

	d2 := startDaemon(t, d.DataDir, cfg)
	checkJobBack(t, d2, key, preID, rec, "ZEBRAQUOKKA-77", audio)
	var liveAgain map[string]any
	if status, body := d2.do("GET", "/v2/live/"+live.ID, key, nil, "", &liveAgain); status != 200 || liveAgain["status"] != "done" {
		t.Fatalf("live job after restart: %d %s", status, body)
	}
	d2.Stop()

	out, err := exec.Command(earshotd, "run", "--listen", "127.0.0.1:0", "--data-dir", d.DataDir).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "encryption_key_file") || !strings.Contains(string(out), "encrypted") {
		t.Fatalf("start without the key: %v, %s; want a refusal naming store.encryption_key_file", err, out)
	}
}

// TestEncryptionDeleteShreds: a job deleted after a backup was taken is
// unrecoverable from the raw database file and from that backup's
// database: its wrapped data key is in no file of the data dir any more,
// and the backup's record, read with the keyring, is an integrity error.
func TestEncryptionDeleteShreds(t *testing.T) {
	_, cfg := sealedConfig(t)
	d := startDaemon(t, "", cfg)
	key := createKey(t, d.DataDir, "acme")
	path, _ := clip(t, "pocketsphinx-goforward.wav")
	_, up, _ := d.upload(key, path)
	var pre struct{ ID string }
	if status, body := d.postJSON("/v2/pre-recorded", key, map[string]any{"audio_url": up.AudioURL}, &pre); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	if rec := d.waitJob(key, pre.ID, 2*time.Minute); rec["status"] != "done" {
		t.Fatalf("job ended %v", rec)
	}
	backup := filepath.Join(t.TempDir(), "before.db")
	if out, err := exec.Command(earshotd, "backup", "--data-dir", d.DataDir, backup).CombinedOutput(); err != nil {
		t.Fatalf("backup: %v %s", err, out)
	}
	ring, _ := os.ReadFile(filepath.Join(d.DataDir, "keyring"))
	wrapped := wrappedKey(t, ring, "j:"+pre.ID)
	if status, body := d.do("DELETE", "/v2/transcription/"+pre.ID, key, nil, "", nil); status != 202 {
		t.Fatalf("delete: %d %s", status, body)
	}
	d.Stop()
	filepath.Walk(d.DataDir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			if b, _ := os.ReadFile(p); bytes.Contains(b, wrapped) || bytes.Contains(b, []byte("j:"+pre.ID)) {
				t.Errorf("%s still holds the deleted job's data key", p)
			}
		}
		return nil
	})
	// The backup's database with the data dir's keyring (and key): the
	// record is there, sealed, and its key is gone.
	restored := t.TempDir()
	db, _ := os.ReadFile(backup)
	live, _ := os.ReadFile(filepath.Join(d.DataDir, "keyring"))
	os.WriteFile(filepath.Join(restored, "earshot.db"), db, 0o600)
	os.WriteFile(filepath.Join(restored, "keyring"), live, 0o600)
	r := startDaemon(t, restored, cfg)
	var eb errBody
	status, body := r.do("GET", "/v2/pre-recorded/"+pre.ID, key, nil, "", &eb)
	if status != 500 || !strings.Contains(string(body), "integrity") {
		t.Fatalf("deleted job read from the backup: %d %s; want 500 naming integrity", status, body)
	}
}

// wrappedKey returns the wrapped data key of id in a keyring file's bytes.
func wrappedKey(t *testing.T, ring []byte, id string) []byte {
	t.Helper()
	i := bytes.Index(ring, []byte(id))
	if i < 0 {
		t.Fatalf("keyring has no %s", id)
	}
	p := i + len(id)
	n := int(ring[p])<<8 | int(ring[p+1])
	return bytes.Clone(ring[p+2 : p+2+n])
}

// TestEncryptionLiveRecordingWhileRunning: with encryption on, a running
// WebSocket session's recording is sealed as it is written: the data dir,
// scanned while the session is open and paused mid-stream (the audio sent
// so far synced to disk), holds no 64-byte run of that audio; the session
// then ends and its recording is the audio sent.
func TestEncryptionLiveRecordingWhileRunning(t *testing.T) {
	_, cfg := sealedConfig(t)
	d := startDaemon(t, "", cfg)
	key := createKey(t, d.DataDir, "acme")
	path, _ := clip(t, "pocketsphinx-goforward.wav")
	pcm := pcmOf(t, path)
	live := d.createLive(key, map[string]any{})
	c, err := dial(t, live.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sent := pcm[:len(pcm)*3/4]
	for i := 0; i < len(sent); i += 32000 {
		c.WriteMessage(websocket.BinaryMessage, sent[i:min(i+32000, len(sent))])
	}
	// The recording syncs at most once a second, at a write: one more
	// frame after a pause makes what was sent reach the disk.
	time.Sleep(1500 * time.Millisecond) // the session's sync interval, on a real process
	last := pcm[len(sent) : len(sent)+3200]
	c.WriteMessage(websocket.BinaryMessage, last)
	sent = pcm[:len(sent)+len(last)]
	time.Sleep(500 * time.Millisecond) // the frame taken in and synced

	var onDisk int64
	filepath.Walk(filepath.Join(d.DataDir, "recordings"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			onDisk += fi.Size()
		}
		return nil
	})
	if onDisk < int64(len(sent)) {
		t.Fatalf("data_dir/recordings holds %d bytes while the session runs, want at least the %d sent", onDisk, len(sent))
	}
	n := scanDir(t, d.DataDir, nil, audioRuns(append(make([]byte, 44), sent...)))
	t.Logf("scanned %d files of %s during the session (%d bytes sent, %d in recordings)", n, d.DataDir, len(sent), onDisk)

	c.WriteJSON(map[string]any{"type": "stop_recording"})
	readAll(t, c, time.Minute)
	var rec map[string]any
	deadline := time.Now().Add(2 * time.Minute)
	for rec["status"] != "done" && time.Now().Before(deadline) {
		d.do("GET", "/v2/live/"+live.ID, key, nil, "", &rec)
		time.Sleep(100 * time.Millisecond) // polling a real process
	}
	if rec["status"] != "done" {
		t.Fatalf("live job ended %v", rec)
	}
	status, file := d.do("GET", "/v2/live/"+live.ID+"/file", key, nil, "", nil)
	if status != 200 || !bytes.Contains(file, sent) {
		t.Fatalf("live recording: %d, %d bytes, want a WAV of the %d bytes sent", status, len(file), len(sent))
	}
	d.Stop()
	scanDir(t, d.DataDir, nil, audioRuns(append(make([]byte, 44), sent...)))
}

// ticketJob uploads testdata's goforward clip and creates a pre-recorded
// job of it with custom_metadata ticket: the clip's path and bytes and the
// job's id.
func ticketJob(t *testing.T, d *daemonProc, key, ticket string, fields ...map[string]any) (string, []byte, string) {
	t.Helper()
	path, _ := clip(t, "pocketsphinx-goforward.wav")
	audio, _ := os.ReadFile(path)
	status, up, body := d.upload(key, path)
	if status != 200 {
		t.Fatalf("upload: %d %s", status, body)
	}
	var pre struct{ ID string }
	req := map[string]any{"audio_url": up.AudioURL, "custom_metadata": map[string]any{"ticket": ticket}}
	for _, f := range fields {
		maps.Copy(req, f)
	}
	if status, body := d.postJSON("/v2/pre-recorded", key, req, &pre); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	return path, audio, pre.ID
}

// accountSecret returns account acme's callback signing secret, through
// the CLI (the running daemon's admin socket, or the store).
func accountSecret(t *testing.T, dataDir string) []byte {
	t.Helper()
	out, err := exec.Command(earshotd, "keys", "secret", "--data-dir", dataDir, "--account", "acme").Output()
	secret, herr := hex.DecodeString(strings.TrimSpace(string(out)))
	if err != nil || herr != nil || len(secret) != 32 {
		t.Fatalf("keys secret: %v %v %q", err, herr, out)
	}
	return secret
}

// scanSecret fails t for every file under dir holding secret, raw or in
// hex.
func scanSecret(t *testing.T, dir string, secret []byte) {
	t.Helper()
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			if b, _ := os.ReadFile(p); bytes.Contains(b, secret) || bytes.Contains(b, []byte(hex.EncodeToString(secret))) {
				t.Errorf("%s holds the callback signing secret in clear", p)
			}
		}
		return nil
	})
}

// checkJobBack fails t unless job id reads back through d with rec's
// result, its ticket and audio.
func checkJobBack(t *testing.T, d *daemonProc, key, id string, rec map[string]any, ticket string, audio []byte) {
	t.Helper()
	var again map[string]any
	if status, body := d.do("GET", "/v2/pre-recorded/"+id, key, nil, "", &again); status != 200 {
		t.Fatalf("read back: %d %s", status, body)
	}
	a, _ := json.Marshal(rec["result"])
	b, _ := json.Marshal(again["result"])
	if !bytes.Equal(a, b) || again["custom_metadata"].(map[string]any)["ticket"] != ticket {
		t.Fatalf("result read back differs:\n%s\n%s", a, b)
	}
	if _, f := d.do("GET", "/v2/pre-recorded/"+id+"/file", key, nil, "", nil); !bytes.Equal(f, audio) {
		t.Fatalf("audio read back: %d bytes, want %d", len(f), len(audio))
	}
}

// TestClearWord: a transcript word counts as held in clear where it stands
// as a word (in JSON text, between a length byte and a quote), not where
// its letters happen to come up inside a sealed value's base64, as
// "there" did in a clean-clone run of TestSIPSealedBaresip.
func TestClearWord(t *testing.T) {
	for _, c := range []struct {
		file string
		want bool
	}{
		{`{"text":"hoped there would"}`, true},
		{"\x05there\x00", true},
		{"\xff\xfe\x05there\x00", true},
		{"there", true},
		{`"es1:Kx0Q-THEREa_9f"`, false},
		{"es1:xTheRe", false},
		{"therefore thereby", false},
	} {
		if got := clearWord(asciiLower([]byte(c.file)), "there") >= 0; got != c.want {
			t.Errorf("clearWord(%q, there) = %v, want %v", c.file, got, c.want)
		}
	}
}
