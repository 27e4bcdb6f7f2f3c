package e2e

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/earshot-dev/earshot/store/postgres/pgtest"
)

// sealedClusterConfig is a node's config on the shared store at dsn, with
// encryption at rest under the key file keyPath.
func sealedClusterConfig(dsn, keyPath, id string) string {
	return fmt.Sprintf("store:\n  backend: postgres\n  dsn: %q\n  encryption_key_file: %s\ncluster:\n  node_id: %s\n", dsn, keyPath, id)
}

// letterWords returns the set of lower-case runs of 5 or more ASCII
// letters in the regular files under dir.
func letterWords(dir string) map[string]bool {
	set := map[string]bool{}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || !fi.Mode().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		for _, w := range bytes.FieldsFunc(bytes.ToLower(b), func(r rune) bool { return r < 'a' || r > 'z' }) {
			if len(w) >= 5 && len(w) <= 32 {
				set[string(w)] = true
			}
		}
		return nil
	})
	return set
}

// scanDirFast is scanDir with the audio's runs looked up by their first 8
// bytes (PostgreSQL's data dir is tens of MB): it fails t for every file
// under dir holding one of words or one of runs anywhere, and returns the
// files and bytes it read.
func scanDirFast(t *testing.T, dir string, words []string, runs map[string]bool) (files int, n int64) {
	t.Helper()
	heads := map[uint64]bool{}
	for r := range runs {
		heads[binary.LittleEndian.Uint64([]byte(r))] = true
	}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || !fi.Mode().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		files++
		n += int64(len(b))
		low := bytes.ToLower(b)
		for _, w := range words {
			if bytes.Contains(low, []byte(strings.ToLower(w))) {
				t.Errorf("%s holds %q in clear", p, w)
			}
		}
		scanBase64(t, p, b, words)
		for i := 0; i+64 <= len(b); i++ {
			if heads[binary.LittleEndian.Uint64(b[i:])] && runs[string(b[i:i+64])] {
				t.Errorf("%s holds a 64-byte run of the audio at %d", p, i)
				break
			}
		}
		return nil
	})
	return files, n
}

// TestClusterEncryption: two nodes on one PostgreSQL, both with the same
// store.encryption_key_file. An upload and a pre-recorded job made on A
// are read on B (B opens the data keys A made, from the table data_keys).
// After a CHECKPOINT, a byte scan of PostgreSQL's whole data directory
// (tables, WAL) and of both nodes' data dirs finds no transcript word, no
// custom_metadata value and no 64-byte run of the uploaded audio. Node A
// restarted with the key reads everything back; a node without the key
// refuses to start, naming the setting; a delete on A leaves the job's
// data key in no row, and B cannot read the job.
func TestClusterEncryption(t *testing.T) {
	t.Parallel() // waits more than it computes: see doc.go
	srv := pgtest.StartTest(t)
	dsn := srv.NewDatabase(t)
	keyPath, _ := sealedConfig(t)
	confA, confB := sealedClusterConfig(dsn, keyPath, "node-a"), sealedClusterConfig(dsn, keyPath, "node-b")
	a := startDaemon(t, "", confA)
	b := startDaemon(t, "", confB)
	key := createClusterKey(t, a, "acme")

	path, _ := clip(t, "ls-test-clean-1089-134686-0000.wav")
	audio, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const marker = "ZEBRAQUOKKA-41"
	// Words already in a fresh cluster's files (PostgreSQL's catalogs hold
	// English text) cannot show a leak: taken before any content, they are
	// left out of the scan.
	before := letterWords(srv.DataDir())

	status, up, body := a.upload(key, path)
	if status != 200 {
		t.Fatalf("upload on A: %d %s", status, body)
	}
	var created struct{ ID string }
	if status, body := a.postJSON("/v2/pre-recorded", key, map[string]any{
		"audio_url": up.AudioURL, "custom_metadata": map[string]any{"ticket": marker},
	}, &created); status != 201 {
		t.Fatalf("create on A: %d %s", status, body)
	}
	rec := b.waitJob(key, created.ID, 2*time.Minute)
	checkRecord(t, rec, created.ID, "done")
	if got := rec["custom_metadata"].(map[string]any)["ticket"]; got != marker {
		t.Fatalf("custom_metadata read on B = %v", got)
	}
	if status, got := b.do("GET", "/v2/files/"+up.AudioMetadata.ID, key, nil, "", nil); status != 200 || !bytes.Equal(got, audio) {
		t.Fatalf("A's upload downloaded from B: %d, %d bytes, want %d", status, len(got), len(audio))
	}
	words := append(transcriptWords(t, rec), marker, filepath.Base(path))

	ctx := t.Context()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var keys int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM data_keys").Scan(&keys); err != nil || keys < 3 {
		t.Fatalf("data_keys rows = %d, %v; want the upload's, the job's and the blobs'", keys, err)
	}
	if _, err := conn.Exec(ctx, "CHECKPOINT"); err != nil {
		t.Fatal(err)
	}
	// What reached disk is what is scanned; the nodes keep running (the
	// shared database's files are written whatever a node does).
	start := time.Now()
	var clean []string
	for _, w := range words {
		if !before[strings.ToLower(w)] {
			clean = append(clean, w)
		}
	}
	if len(clean) < 5 {
		t.Fatalf("only %d words of %v to scan for", len(clean), words)
	}
	runs := audioRuns(audio)
	files, n := 0, int64(0)
	for _, dir := range []string{srv.DataDir(), a.DataDir, b.DataDir} {
		f, m := scanDirFast(t, dir, clean, runs)
		files, n = files+f, n+m
	}
	t.Logf("scanned %d files, %d MB (PostgreSQL's data dir after a CHECKPOINT, both nodes' data dirs) for %d of %d words and %d audio runs in %v",
		files, n>>20, len(clean), len(words), len(runs), time.Since(start).Round(time.Millisecond))

	// A restarted with the key reads everything back.
	a.Stop()
	a2 := startDaemon(t, a.DataDir, confA)
	var again map[string]any
	if status, body := a2.do("GET", "/v2/pre-recorded/"+created.ID, key, nil, "", &again); status != 200 {
		t.Fatalf("after restart: %d %s", status, body)
	}
	r1, _ := json.Marshal(rec["result"])
	r2, _ := json.Marshal(again["result"])
	if !bytes.Equal(r1, r2) || again["custom_metadata"].(map[string]any)["ticket"] != marker {
		t.Fatalf("result after restart differs:\n%s\n%s", r1, r2)
	}
	if _, f := a2.do("GET", "/v2/pre-recorded/"+created.ID+"/file", key, nil, "", nil); !bytes.Equal(f, audio) {
		t.Fatalf("audio after restart: %d bytes, want %d", len(f), len(audio))
	}

	// A node without the key refuses the sealed database.
	noKey := filepath.Join(t.TempDir(), "earshot.yaml")
	os.WriteFile(noKey, []byte(clusterConfig(dsn, "node-c")), 0o600)
	out, err := exec.Command(earshotd, "run", "--listen", "127.0.0.1:0", "--data-dir", t.TempDir(), "--config", noKey).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "encryption_key_file") || !strings.Contains(string(out), "data_keys") {
		t.Fatalf("a node without the key: %v, %s; want a refusal naming store.encryption_key_file", err, out)
	}

	// A delete on A destroys the job's data key: B reads nothing of it.
	if status, body := a2.do("DELETE", "/v2/pre-recorded/"+created.ID, key, nil, "", nil); status/100 != 2 {
		t.Fatalf("delete on A: %d %s", status, body)
	}
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM data_keys WHERE id = $1", "j:"+created.ID).Scan(&keys); err != nil || keys != 0 {
		t.Fatalf("the deleted job's data key rows = %d, %v; want 0", keys, err)
	}
	if status, body := b.do("GET", "/v2/pre-recorded/"+created.ID, key, nil, "", nil); status != 404 {
		t.Fatalf("deleted job read on B: %d %s", status, body)
	}
}
