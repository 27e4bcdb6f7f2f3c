package e2e

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// keyringWraps counts the slots of a keyring file by the id of the key
// wrapping them, and reports whether its header records a rotation.
func keyringWraps(t *testing.T, dir string) (map[string]int, bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "keyring"))
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for p := 512; p+512 <= len(b); p += 512 {
		if s := b[p : p+512]; s[0] == 1 {
			n[string(s[6:6+int(s[5])])]++
		}
	}
	return n, len(b) >= 512 && bytes.Contains(b[:512], []byte(`"rotation"`))
}

// TestEncryptionRotationKill: a data-key rotation of a sealed daemon
// holding several hundred uploads and jobs being transcribed, SIGKILLed
// while it re-wraps (part of the keyring under each key), then restarted
// with store.encryption_key_file set to the new key as docs/deployment.md
// says: the rotation resumes from the keyring's header (reading the old
// key's file it names) to every data key under the new key; every job
// finishes and reads back with its audio, uploads made before and during
// the rotation read back through jobs.
func TestEncryptionRotationKill(t *testing.T) {
	keyA, cfg := sealedConfig(t)
	cfg += "limits:\n  requests_per_second: 0\n"
	d := startDaemon(t, "", cfg)
	key := createKey(t, d.DataDir, "acme")
	path, _ := clip(t, "pocketsphinx-goforward.wav")
	audio, _ := os.ReadFile(path)
	pcm := pcmOf(t, path)[:2*16000*3/10]
	samples := make([]int16, len(pcm)/2)
	binary.Read(bytes.NewReader(pcm), binary.LittleEndian, samples)
	small := filepath.Join(t.TempDir(), "short.wav")
	writeWAV16(t, small, 1, samples)
	smallBytes, _ := os.ReadFile(small)

	// Several hundred uploads: a data key each (its blob's, which its
	// record shares), so the paced re-wrap (500 a second) runs long enough
	// to be killed in the middle.
	const uploads = 400
	var urls []string
	start := time.Now()
	for range uploads {
		status, up, body := d.upload(key, small)
		if status != 200 {
			t.Fatalf("upload: %d %s", status, body)
		}
		urls = append(urls, up.AudioURL)
	}
	t.Logf("%d uploads in %s", uploads, time.Since(start).Round(time.Millisecond))
	create := func(d *daemonProc, url string) string {
		t.Helper()
		var pre struct{ ID string }
		if status, body := d.postJSON("/v2/pre-recorded", key, map[string]any{"audio_url": url}, &pre); status != 201 {
			t.Fatalf("create: %d %s", status, body)
		}
		return pre.ID
	}
	// Real jobs queued and being transcribed while the rotation runs.
	_, up, _ := d.upload(key, path)
	var jobs []string
	for range 2 {
		jobs = append(jobs, create(d, up.AudioURL))
	}

	keyB := filepath.Join(filepath.Dir(keyA), "data-key.2")
	out, err := exec.Command(earshotd, "keys", "generate-data-key", keyB).CombinedOutput()
	if err != nil {
		t.Fatalf("generate-data-key: %v %s", err, out)
	}
	m := regexp.MustCompile(`wrote key ([0-9a-f]{8})`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("generate-data-key printed %q", out)
	}
	idB := string(m[1])
	rot := exec.Command(earshotd, "keys", "rotate-data-key", "--data-dir", d.DataDir, "--new-key-file", keyB)
	if err := rot.Start(); err != nil {
		t.Fatal(err)
	}
	defer rot.Wait()
	// During the rotation: an upload (its key under the new key) and a job.
	var during string
	deadline := time.Now().Add(30 * time.Second)
	for {
		wraps, rotating := keyringWraps(t, d.DataDir)
		if rotating && wraps[idB] > 0 && during == "" {
			status, u, body := d.upload(key, small)
			if status != 200 {
				t.Fatalf("upload during the rotation: %d %s", status, body)
			}
			during = u.AudioURL
			jobs = append(jobs, create(d, up.AudioURL))
		}
		if wraps[idB] >= 120 {
			if !rotating || len(wraps) != 2 {
				t.Fatalf("keyring at the kill: %v, rotating %v; want both keys, mid-rotation", wraps, rotating)
			}
			d.Kill()
			t.Logf("SIGKILL with the keyring at %v", wraps)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("rotation not under way after 30s: %v", wraps)
		}
		time.Sleep(5 * time.Millisecond) // polling a real process's file
	}
	if err := rot.Wait(); err == nil {
		t.Fatal("rotate-data-key succeeded though the daemon was killed mid-rotation")
	}

	// Restart as the docs say: the new key configured (the old key's file
	// still in place, named by the keyring).
	d2 := startDaemon(t, d.DataDir, "store:\n  encryption_key_file: "+keyB+"\nlimits:\n  requests_per_second: 0\n")
	for _, url := range []string{urls[0], urls[uploads-1], during} {
		jobs = append(jobs, create(d2, url))
	}
	for i, id := range jobs {
		rec := d2.waitJob(key, id, 3*time.Minute)
		if rec["status"] != "done" {
			t.Fatalf("job %s after the restart: %v", id, rec)
		}
		want := audio
		if i >= 3 {
			want = smallBytes
		} else {
			transcriptWords(t, rec)
		}
		if status, f := d2.do("GET", "/v2/pre-recorded/"+id+"/file", key, nil, "", nil); status != 200 || !bytes.Equal(f, want) {
			t.Fatalf("job %s's audio after the restart: %d, %d bytes; want %d", id, status, len(f), len(want))
		}
	}
	deadline = time.Now().Add(time.Minute)
	for {
		wraps, rotating := keyringWraps(t, d.DataDir)
		// Every key under B: at least one per upload, and the jobs'.
		if !rotating && len(wraps) == 1 && wraps[idB] > uploads {
			t.Logf("resumed rotation done: %v", wraps)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("keyring a minute after the restart: %v, rotating %v; want every key under %s", wraps, rotating, idB)
		}
		time.Sleep(50 * time.Millisecond) // polling a real process's file
	}
	d2.Stop()
	// The old key is no longer needed.
	if err := os.Remove(keyA); err != nil {
		t.Fatal(err)
	}
	d3 := startDaemon(t, d.DataDir, "store:\n  encryption_key_file: "+keyB+"\n")
	if status, f := d3.do("GET", "/v2/pre-recorded/"+jobs[0]+"/file", key, nil, "", nil); status != 200 || !bytes.Equal(f, audio) {
		t.Fatalf("audio with the new key alone: %d, %d bytes", status, len(f))
	}
}
