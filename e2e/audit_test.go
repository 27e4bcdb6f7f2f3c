package e2e

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"
)

// auditEntry is an entry of GET /admin/audit.
type auditEntry struct {
	Seq     uint64 `json:"seq"`
	At      string `json:"at"`
	KeyID   string `json:"key_id"`
	Account string `json:"account"`
	Source  string `json:"source"`
	Action  string `json:"action"`
	Object  string `json:"object"`
	Status  int    `json:"status"`
	Prev    string `json:"prev"`
	Hash    string `json:"hash"`
}

type auditPage struct {
	First, Current string
	Next           *string
	Items          []auditEntry
}

// keyIDOf finds the id of the key whose secret is secret in GET /admin/keys
// (keys show their first 8 characters).
func keyIDOf(t *testing.T, d *daemonProc, admin, secret string) string {
	t.Helper()
	var ks struct {
		Keys []struct{ ID, Prefix string }
	}
	if st, body := d.do("GET", "/admin/keys", admin, nil, "", &ks); st != 200 {
		t.Fatalf("GET /admin/keys: %d %s", st, body)
	}
	for _, k := range ks.Keys {
		if strings.HasPrefix(secret, k.Prefix) {
			return k.ID
		}
	}
	t.Fatalf("no key with the prefix of %.8s", secret)
	return ""
}

// TestAuditTrail: every audited action through the real daemon is in GET
// /admin/audit with the key that did it; the trail holds no secret; the
// legal hold keeps a job from its owner's DELETE (409) until released;
// `earshotd audit verify` accepts the chain (daemon running: through its
// admin socket; stopped: on the file) and, after one entry is edited in
// the bbolt file, fails naming that entry.
func TestAuditTrail(t *testing.T) {
	d := startDaemon(t, "", "")
	admin := createKey(t, d.DataDir, "admin") // through the admin socket: key.create by admin-socket
	acme := createKey(t, d.DataDir, "acme")
	adminID, acmeID := keyIDOf(t, d, admin, admin), keyIDOf(t, d, admin, acme)

	type want struct{ action, keyID, object string }
	var wants []want
	path, _ := clip(t, "librivox-sense-and-sensibility-01-0880.wav")
	st, up, body := d.upload(acme, path)
	if st != 200 {
		t.Fatalf("upload: %d %s", st, body)
	}
	wants = append(wants, want{"upload.create", acmeID, up.AudioMetadata.ID})
	if st, _ := d.do("GET", "/v2/files/"+up.AudioMetadata.ID, acme, nil, "", nil); st != 200 {
		t.Fatalf("GET file: %d", st)
	}
	wants = append(wants, want{"upload.read", acmeID, up.AudioMetadata.ID})
	var created struct{ ID string }
	if st, body := d.postJSON("/v2/pre-recorded", acme, map[string]any{"audio_url": up.AudioURL}, &created); st != 201 {
		t.Fatalf("create: %d %s", st, body)
	}
	job := created.ID
	wants = append(wants, want{"pre-recorded.create", acmeID, job})
	d.waitJob(acme, job, 2*time.Minute)
	wants = append(wants, want{"pre-recorded.read", acmeID, job})
	if st, _ := d.do("GET", "/v2/pre-recorded", acme, nil, "", nil); st != 200 {
		t.Fatalf("list: %d", st)
	}
	wants = append(wants, want{"pre-recorded.list", acmeID, ""})
	if st, _ := d.do("GET", "/v2/pre-recorded/"+job+"/file", acme, nil, "", nil); st != 200 {
		t.Fatalf("audio: %d", st)
	}
	wants = append(wants, want{"pre-recorded.audio", acmeID, job})
	var live struct{ ID, URL string }
	if st, body := d.postJSON("/v2/live", acme, map[string]any{}, &live); st != 201 {
		t.Fatalf("live: %d %s", st, body)
	}
	wants = append(wants, want{"live.create", acmeID, live.ID})
	// The session's WebSocket client (its token, no key): live.stream under
	// the key that created the session, from the client's address.
	conn, err := dial(t, live.URL)
	if err != nil {
		t.Fatal(err)
	}
	wants = append(wants, want{"live.stream", acmeID, live.ID})
	d.postJSON("/v2/live/"+live.ID+"/pause", acme, "", nil)
	d.postJSON("/v2/live/"+live.ID+"/resume", acme, "", nil)
	wants = append(wants, want{"live.pause", acmeID, live.ID}, want{"live.resume", acmeID, live.ID})

	// Keys over HTTP, by the admin key.
	var k struct{ ID, Key string }
	if st, body := d.postJSON("/admin/keys", admin, map[string]string{"account": "beta"}, &k); st != 201 {
		t.Fatalf("POST /admin/keys: %d %s", st, body)
	}
	if st, body := d.do("DELETE", "/admin/keys/"+k.ID, admin, nil, "", nil); st != 202 {
		t.Fatalf("DELETE key: %d %s", st, body)
	}
	wants = append(wants, want{"key.create", adminID, k.ID}, want{"key.revoke", adminID, k.ID})

	// The legal hold: admin only; the owner's DELETE is 409 while held.
	if st, _ := d.postJSON("/v2/pre-recorded/"+job+"/hold", acme, "", nil); st != 403 {
		t.Errorf("hold with a non-admin key: %d, want 403", st)
	}
	if st, _ := d.postJSON("/v2/pre-recorded/nope/hold", admin, "", nil); st != 404 {
		t.Errorf("hold of an unknown id: %d, want 404", st)
	}
	var hold struct {
		Held    bool
		HeldBy  *string `json:"held_by"`
		Account string
	}
	if st, body := d.postJSON("/v2/pre-recorded/"+job+"/hold", admin, "", &hold); st != 200 || !hold.Held || hold.HeldBy == nil || *hold.HeldBy != adminID || hold.Account != "acme" {
		t.Fatalf("hold: %d %s", st, body)
	}
	var refused errBody
	if st, body := d.do("DELETE", "/v2/pre-recorded/"+job, acme, nil, "", &refused); st != 409 || refused.StatusCode != 409 || refused.Message != "job is under legal hold" || refused.RequestID == "" {
		t.Errorf("DELETE of a held job: %d %s, want 409 with the contract's error body", st, body)
	}
	if st, _ := d.do("GET", "/v2/pre-recorded/"+job, acme, nil, "", nil); st != 200 {
		t.Errorf("held job after its refused DELETE: %d, want 200", st)
	}
	if st, body := d.do("DELETE", "/v2/pre-recorded/"+job+"/hold", admin, nil, "", &hold); st != 200 || hold.Held {
		t.Fatalf("release: %d %s", st, body)
	}
	if st, body := d.do("DELETE", "/v2/pre-recorded/"+job, acme, nil, "", nil); st != 202 {
		t.Fatalf("DELETE after release: %d %s", st, body)
	}
	conn.Close()
	if st, _ := d.do("DELETE", "/v2/live/"+live.ID, acme, nil, "", nil); st != 202 {
		t.Fatalf("DELETE live: %d", st)
	}
	wants = append(wants, want{"pre-recorded.hold", adminID, job}, want{"pre-recorded.delete", acmeID, job},
		want{"pre-recorded.release", adminID, job}, want{"live.delete", acmeID, live.ID})
	d.cmd.Process.Signal(syscall.SIGHUP)
	wants = append(wants, want{"config.reload", "", ""})

	if st, _ := d.do("GET", "/admin/audit", acme, nil, "", nil); st != 403 {
		t.Errorf("GET /admin/audit with a non-admin key: %d, want 403", st)
	}
	// The trail is appended beside the requests: poll until it holds all.
	var all []auditEntry
	deadline := time.Now().Add(20 * time.Second)
	for {
		var p auditPage
		st, body := d.do("GET", "/admin/audit?limit=1000", admin, nil, "", &p)
		if st != 200 {
			t.Fatalf("GET /admin/audit: %d %s", st, body)
		}
		all = p.Items
		missing := missingAudit(all, wants, func(e auditEntry, w want) bool {
			return e.Action == w.action && e.KeyID == w.keyID && (w.object == "" || e.Object == w.object)
		})
		if len(missing) == 0 {
			for _, secret := range []string{admin, acme, k.Key} {
				if strings.Contains(string(body), secret) || strings.Contains(string(body), secret[3:]) {
					t.Errorf("the audit trail holds a key secret")
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("audit trail lacks %v; has %+v", missing, all)
		}
		time.Sleep(50 * time.Millisecond) // polling a real process's asynchronous append, not settling
	}
	for _, e := range all {
		if e.KeyID != "" && !strings.HasPrefix(e.Source, "127.0.0.1:") {
			t.Errorf("entry %d (%s) source %q, want the client's address", e.Seq, e.Action, e.Source)
		}
	}
	if !hasAudit(all, "key.create", func(e auditEntry) bool { return e.Source == "admin-socket" && e.Account == "acme" }) {
		t.Errorf("the CLI's key creation is not in the trail as admin-socket")
	}
	if !hasAudit(all, "pre-recorded.delete", func(e auditEntry) bool { return e.Status == 409 }) {
		t.Errorf("the refused DELETE of the held job is not in the trail with status 409")
	}
	// Filters and paging.
	var p auditPage
	d.do("GET", "/admin/audit?action=pre-recorded.audio&account=acme", admin, nil, "", &p)
	if len(p.Items) != 1 || p.Items[0].Object != job {
		t.Errorf("?action=pre-recorded.audio&account=acme: %+v", p.Items)
	}
	d.do("GET", "/admin/audit?object="+live.ID+"&limit=2", admin, nil, "", &p)
	if len(p.Items) != 2 || p.Next == nil || p.Items[0].Seq < p.Items[1].Seq {
		t.Errorf("?object=%s&limit=2: %d items newest first, next %v", live.ID, len(p.Items), p.Next)
	}

	verify := func() (string, error) {
		out, err := exec.Command(earshotd, "audit", "verify", "--data-dir", d.DataDir).CombinedOutput()
		return string(out), err
	}
	if out, err := verify(); err != nil || !strings.Contains(out, "audit chain ok") {
		t.Fatalf("audit verify, daemon running: %v\n%s", err, out)
	}
	d.Stop()
	out, err := verify()
	if err != nil || !strings.Contains(out, "audit chain ok") {
		t.Fatalf("audit verify, daemon stopped: %v\n%s", err, out)
	}
	// Edit one entry in the file as someone with the disk would: its
	// object, hash left as it was.
	edited := all[len(all)/2].Seq
	db, err := bbolt.Open(filepath.Join(d.DataDir, "earshot.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket([]byte("audit"))
		key := binary.BigEndian.AppendUint64(nil, edited)
		var e map[string]any
		if err := json.Unmarshal(b.Get(key), &e); err != nil {
			return err
		}
		e["account"] = "someone-else"
		v, _ := json.Marshal(e)
		return b.Put(key, v)
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	out, err = verify()
	if err == nil || !strings.Contains(out, fmt.Sprintf("chain broken at entry %d", edited)) {
		t.Errorf("audit verify after entry %d was edited: %v\n%s", edited, err, out)
	}
}

func missingAudit[W any](all []auditEntry, wants []W, match func(auditEntry, W) bool) []W {
	var missing []W
	for _, w := range wants {
		found := false
		for _, e := range all {
			if match(e, w) {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, w)
		}
	}
	return missing
}

func hasAudit(all []auditEntry, action string, ok func(auditEntry) bool) bool {
	for _, e := range all {
		if e.Action == action && ok(e) {
			return true
		}
	}
	return false
}

// waitAudit polls GET /admin/audit?query (admin key) until done accepts
// its entries, failing t after 20 s: the trail is appended beside the
// requests.
func waitAudit(t *testing.T, d *daemonProc, admin, query string, done func([]auditEntry) bool) []auditEntry {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var p auditPage
		if st, body := d.do("GET", "/admin/audit?"+query, admin, nil, "", &p); st != 200 {
			t.Fatalf("GET /admin/audit?%s: %d %s", query, st, body)
		}
		if done(p.Items) {
			return p.Items
		}
		if time.Now().After(deadline) {
			t.Fatalf("audit trail ?%s: %+v", query, p.Items)
		}
		time.Sleep(50 * time.Millisecond) // polling a real process's asynchronous append, not settling
	}
}
