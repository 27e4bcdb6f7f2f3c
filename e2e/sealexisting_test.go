package e2e

import (
	"bytes"
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
	_, audio, id := ticketJob(t, d, key, "ZEBRAQUOKKA-88")
	rec := d.waitJob(key, id, 2*time.Minute)
	if rec["status"] != "done" {
		t.Fatalf("job ended %v", rec)
	}
	words := append(transcriptWords(t, rec), "ZEBRAQUOKKA-88")
	secret := accountSecret(t, d.DataDir)
	d.Stop()
	if db, _ := os.ReadFile(filepath.Join(d.DataDir, "earshot.db")); !bytes.Contains(db, []byte("ZEBRAQUOKKA-88")) {
		t.Fatal("the unsealed database does not hold the metadata in clear: the scan below shows nothing")
	}

	keyFile, cfg := sealedConfig(t)
	d2 := startDaemon(t, d.DataDir, cfg)
	// The count runs beside the doors once the daemon has started.
	d2.WaitLog(time.Minute, "still in clear")
	if n := len(d2.linesWith("still in clear")); n != 1 {
		t.Errorf("the sealed daemon on clear data logged %d warnings, want 1", n)
	}
	var got map[string]any
	if status, body := d2.do("GET", "/v2/pre-recorded/"+id, key, nil, "", &got); status != 200 {
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
	scanSecret(t, d.DataDir, secret)

	d3 := startDaemon(t, d.DataDir, cfg)
	d3.WaitLog(time.Minute, "no audio file or job is stored in clear")
	if n := len(d3.linesWith("still in clear")); n != 0 {
		t.Errorf("after seal-existing the daemon still warns: %v", d3.linesWith("still in clear"))
	}
	checkJobBack(t, d3, key, id, rec, "ZEBRAQUOKKA-88", audio)
	if !bytes.Equal(accountSecret(t, d.DataDir), secret) {
		t.Error("the callback signing secret changed")
	}
	d3.Stop()
}
