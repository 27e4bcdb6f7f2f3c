package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestEncryptionSealExisting: a data dir that served an upload and a
// pre-recorded job before encryption at rest was turned on, the job's
// callback still being retried (its receiver answers 503), holds them in
// clear; the daemon started with a data key reads them and warns that they
// are in clear; `earshotd keys seal-existing` refuses while the daemon
// runs, and with it stopped seals them in place and compacts the
// database: no file of the data dir then holds a transcript word, the
// custom metadata, a 64-byte run of the audio or the account's callback
// signing secret (moved into the keyring, its old copy in the database's
// free pages gone), and the daemon reads the job and its audio back
// identical, without the warning, and delivers the callback, sealed in
// the outbox meanwhile, under its first delivery id. Before (until
// 2026-11-30) turning the key on left all of it in clear until it expired;
// until 2026-12-01 the callback's body (the transcript) stayed in clear
// until it was delivered or given up.
func TestEncryptionSealExisting(t *testing.T) {
	hook, hookURL := startHookReceiver(t)
	hook.mu.Lock()
	hook.fail = 1 << 30
	hook.mu.Unlock()
	retry := "callbacks:\n  min_backoff: 200ms\n  max_backoff: 500ms\n"
	d := startDaemon(t, "", retry)
	key := createKey(t, d.DataDir, "acme")
	_, audio, id := ticketJob(t, d, key, "ZEBRAQUOKKA-88", map[string]any{"callback_url": hookURL})
	rec := d.waitJob(key, id, 2*time.Minute)
	if rec["status"] != "done" {
		t.Fatalf("job ended %v", rec)
	}
	words := append(transcriptWords(t, rec), "ZEBRAQUOKKA-88")
	secret := accountSecret(t, d.DataDir)
	refused := func() []string {
		hook.mu.Lock()
		defer hook.mu.Unlock()
		return slices.Clone(hook.refused)
	}
	for deadline := time.Now().Add(time.Minute); len(refused()) < 2; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the callback was tried %d times, want it retried", len(refused()))
		}
	}
	d.Stop()
	if db, _ := os.ReadFile(filepath.Join(d.DataDir, "earshot.db")); !bytes.Contains(db, []byte("ZEBRAQUOKKA-88")) {
		t.Fatal("the unsealed database does not hold the metadata in clear: the scan below shows nothing")
	}

	keyFile, cfg := sealedConfig(t)
	cfg += retry
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
	if !strings.Contains(out2, "sealed 2 audio files (1 clear files overwritten with zeros), 1 jobs, 1 uploads, 1 pending callback bodies") {
		t.Errorf("seal-existing said %q; want 2 audio files (1 file zeroed), 1 job, 1 upload, 1 callback", out2)
	}

	n := scanDir(t, d.DataDir, words, audioRuns(audio))
	t.Logf("scanned %d files of %s for %d words and the audio's runs", n, d.DataDir, len(words))
	scanSecret(t, d.DataDir, secret)

	hook.mu.Lock()
	hook.fail = 0
	hook.mu.Unlock()
	d3 := startDaemon(t, d.DataDir, cfg)
	d3.WaitLog(time.Minute, "no audio file, job or callback body is stored in clear")
	if n := len(d3.linesWith("still in clear")); n != 0 {
		t.Errorf("after seal-existing the daemon still warns: %v", d3.linesWith("still in clear"))
	}
	checkJobBack(t, d3, key, id, rec, "ZEBRAQUOKKA-88", audio)
	if !bytes.Equal(accountSecret(t, d.DataDir), secret) {
		t.Error("the callback signing secret changed")
	}
	select {
	case <-hook.hit:
	case <-time.After(time.Minute):
		t.Fatal("the sealed callback was not delivered")
	}
	hook.mu.Lock()
	hit := hook.got[0]
	hook.mu.Unlock()
	if first := refused()[0]; hit.delivery != first || !bytes.Contains(hit.body, []byte(words[0])) {
		t.Errorf("delivered %s with %.200s; want delivery %s, the transcript", hit.delivery, hit.body, first)
	}
	d3.Stop()
}
