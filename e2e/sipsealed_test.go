package e2e

import (
	"testing"
	"time"
)

// sipSealedConfig routes one user to account acme; its RTP ports are this
// test's own.
const sipSealedConfig = `
sip:
  listen: 127.0.0.1:0
  rtp_ports: 33000-33019
  max_calls: 2
  allow: [127.0.0.0/8]
  routes:
    - user: sealed
      account: acme
      live: {custom_metadata: {call: sealed}}
`

// TestSIPSealedBaresip (issue 40): with store.encryption_key_file, a real
// baresip call (PCMU, 10.4 s of speech) is transcribed and its record and
// recording read back through the API; once its batch pass is stored and
// the daemon stopped, no file of the data dir (database, keyring, blobs,
// recordings, scratch) holds a word of its transcript or a 64-byte run of
// its recording's mu-law bytes as stored.
func TestSIPSealedBaresip(t *testing.T) {
	_, sealedCfg := sealedConfig(t)
	d, addr := startSIPDaemon(t, telephoneModel(t)+sipSealedConfig+sealedCfg)
	key := createKey(t, d.DataDir, "acme")
	wav16, _ := clip(t, codecClip)
	baresip(t, "sip:sealed@"+addr, "PCMU/8000/1", narrowband(t, wav16), 8000, 16*time.Second)
	job := liveJobByMetadata(t, d, key, "call", "sealed", 60*time.Second)
	if job["status"] != "done" {
		t.Fatalf("call's job ended %v", job["status"])
	}
	id := job["id"].(string)
	// The batch pass replaces the result: the scan is of the final state.
	deadline := time.Now().Add(batchPassWait)
	for {
		md, _ := job["post_session_metadata"].(map[string]any)
		if md["transcription_pass"] == "batch" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no batch pass stored within %s: %v", batchPassWait, md)
		}
		time.Sleep(100 * time.Millisecond) // polling a real process
		d.do("GET", "/v2/live/"+id, key, nil, "", &job)
	}
	words := transcriptWords(t, job)
	status, wav := d.do("GET", "/v2/live/"+id+"/file", key, nil, "", nil)
	if status != 200 || len(wav) < 44 || string(wav[:4]) != "RIFF" || wav[20] != 7 {
		t.Fatalf("GET file: %d, %d bytes, want a mu-law WAV", status, len(wav))
	}
	runs := audioRuns(wav)
	if len(runs) < 100 {
		t.Fatalf("only %d distinct 64-byte runs in a %d-byte recording", len(runs), len(wav))
	}
	d.Stop()
	n := scanDir(t, d.DataDir, words, runs)
	t.Logf("scanned %d files of %s for %d transcript words %q and %d runs of the recording", n, d.DataDir, len(words), words, len(runs))
}
