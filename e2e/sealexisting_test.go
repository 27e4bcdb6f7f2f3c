package e2e

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestEncryptionSealExisting: a data dir that served an upload and a
// pre-recorded job before encryption at rest was turned on holds them in
// clear; the daemon started with a data key reads them and warns that they
// are in clear; `earshotd keys seal-existing` refuses while the daemon
// runs, and with it stopped seals them in place and compacts the
// database: no file of the data dir then holds a transcript word, the
// custom metadata, a 64-byte run of the audio or the account's callback
// signing secret (moved into the keyring, its old copy in the database's
// free pages gone), and the daemon reads the job and its audio back
// identical, without the warning. Before (until 2026-11-30) turning the
// key on left all of it in clear until it expired.
func TestEncryptionSealExisting(t *testing.T) {
	d := startDaemon(t, "", "")
	key := createKey(t, d.DataDir, "acme")
	path, _ := clip(t, "pocketsphinx-goforward.wav")
	audio, _ := os.ReadFile(path)
	status, up, body := d.upload(key, path)
	if status != 200 {
		t.Fatalf("upload: %d %s", status, body)
	}
	var pre struct{ ID string }
	if status, body := d.postJSON("/v2/pre-recorded", key, map[string]any{
		"audio_url": up.AudioURL, "custom_metadata": map[string]any{"ticket": "ZEBRAQUOKKA-88"},
	}, &pre); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	rec := d.waitJob(key, pre.ID, 2*time.Minute)
	if rec["status"] != "done" {
		t.Fatalf("job ended %v", rec)
	}
	words := append(transcriptWords(t, rec), "ZEBRAQUOKKA-88")
	out, err := exec.Command(earshotd, "keys", "secret", "--data-dir", d.DataDir, "--account", "acme").Output()
	secret, herr := hex.DecodeString(strings.TrimSpace(string(out)))
	if err != nil || herr != nil || len(secret) != 32 {
		t.Fatalf("keys secret: %v %v %q", err, herr, out)
	}
	d.Stop()
	if db, _ := os.ReadFile(filepath.Join(d.DataDir, "earshot.db")); !bytes.Contains(db, []byte("ZEBRAQUOKKA-88")) {
		t.Fatal("the unsealed database does not hold the metadata in clear: the scan below shows nothing")
	}

	keyFile, cfg := sealedConfig(t)
	d2 := startDaemon(t, d.DataDir, cfg)
	if n := len(d2.linesWith("still in clear")); n != 1 {
		t.Errorf("the sealed daemon on clear data logged %d warnings, want 1", n)
	}
	var got map[string]any
	if status, body := d2.do("GET", "/v2/pre-recorded/"+pre.ID, key, nil, "", &got); status != 200 {
		t.Fatalf("clear job through the sealed daemon: %d %s", status, body)
	}
	sealExisting := func() (string, error) {
		out, err := exec.Command(earshotd, "keys", "seal-existing", "--data-dir", d.DataDir, "--set", "store.encryption_key_file="+keyFile).CombinedOutput()
		return string(out), err
	}
	if out, err := sealExisting(); err == nil || !strings.Contains(out, "stop it first") {
		t.Errorf("seal-existing beside the running daemon: %v %s; want a refusal", err, out)
	}
	d2.Stop()
	out2, err := sealExisting()
	if err != nil {
		t.Fatalf("seal-existing: %v %s", err, out2)
	}
	t.Logf("seal-existing: %s", out2)
	// The upload's audio and the job's made from it: one clear file under
	// two names, zeroed once the second no longer names it.
	if !strings.Contains(out2, "sealed 2 audio files (1 clear files overwritten with zeros), 1 jobs, 1 uploads") {
		t.Errorf("seal-existing said %q; want 2 audio files (1 file zeroed), 1 job, 1 upload", out2)
	}

	n := scanDir(t, d.DataDir, words, audioRuns(audio))
	t.Logf("scanned %d files of %s for %d words and the audio's runs", n, d.DataDir, len(words))
	filepath.Walk(d.DataDir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			if b, _ := os.ReadFile(p); bytes.Contains(b, secret) || bytes.Contains(b, []byte(hex.EncodeToString(secret))) {
				t.Errorf("%s holds the callback signing secret in clear", p)
			}
		}
		return nil
	})

	d3 := startDaemon(t, d.DataDir, cfg)
	if n := len(d3.linesWith("still in clear")); n != 0 {
		t.Errorf("after seal-existing the daemon still warns: %v", d3.linesWith("still in clear"))
	}
	var again map[string]any
	if status, body := d3.do("GET", "/v2/pre-recorded/"+pre.ID, key, nil, "", &again); status != 200 {
		t.Fatalf("after seal-existing: %d %s", status, body)
	}
	a, _ := json.Marshal(rec["result"])
	b, _ := json.Marshal(again["result"])
	if !bytes.Equal(a, b) || again["custom_metadata"].(map[string]any)["ticket"] != "ZEBRAQUOKKA-88" {
		t.Fatalf("result after seal-existing differs:\n%s\n%s", a, b)
	}
	if _, f := d3.do("GET", "/v2/pre-recorded/"+pre.ID+"/file", key, nil, "", nil); !bytes.Equal(f, audio) {
		t.Fatalf("audio after seal-existing: %d bytes, want %d", len(f), len(audio))
	}
	if out, err := exec.Command(earshotd, "keys", "secret", "--data-dir", d.DataDir, "--account", "acme").Output(); err != nil || !bytes.Equal([]byte(strings.TrimSpace(string(out))), []byte(hex.EncodeToString(secret))) {
		t.Errorf("the callback signing secret changed: %v", err)
	}
	d3.Stop()
}
