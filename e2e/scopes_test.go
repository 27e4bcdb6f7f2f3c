package e2e

import (
	"strings"
	"testing"
	"time"
)

type scopedKey struct {
	adminKey
	Scopes    []string `json:"scopes"`
	ExpiresAt *string  `json:"expires_at"`
}

// TestScopedKeys (issue 40): a read-only key (scopes [jobs:read]) lists and
// reads its account's jobs but cannot create or delete one, download audio
// or open a live session: 403 with the contract's error body naming the
// scope; a key made without scopes keeps every right; a key past its
// expires_at gets 401; malformed grants are 400.
func TestScopedKeys(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, "", "")
	admin := createKey(t, d.DataDir, "admin")
	full := createKey(t, d.DataDir, "acme") // no scopes: every right, as before scopes
	path, _ := clip(t, "pocketsphinx-goforward.wav")
	status, up, body := d.upload(full, path)
	if status != 200 {
		t.Fatalf("upload: %d %s", status, body)
	}
	var job struct{ ID string }
	if status, body := d.postJSON("/v2/pre-recorded", full, map[string]any{"audio_url": up.AudioURL}, &job); status != 201 {
		t.Fatalf("create job: %d %s", status, body)
	}
	d.waitJob(full, job.ID, 2*time.Minute)

	var ro scopedKey
	if status, body := d.postJSON("/admin/keys", admin, map[string]any{"account": "acme", "scopes": []string{"jobs:read"}}, &ro); status != 201 ||
		strings.Join(ro.Scopes, ",") != "jobs:read" || ro.ExpiresAt != nil || !strings.HasPrefix(ro.Key, "es_") {
		t.Fatalf("POST /admin/keys scopes [jobs:read]: %d %s", status, body)
	}

	t.Run("read-only key reads", func(t *testing.T) {
		var page struct{ Items []struct{ ID string } }
		if status, body := d.do("GET", "/v2/pre-recorded", ro.Key, nil, "", &page); status != 200 || len(page.Items) != 1 || page.Items[0].ID != job.ID {
			t.Errorf("GET /v2/pre-recorded with the read-only key: %d %s", status, body)
		}
		if status, body := d.do("GET", "/v2/pre-recorded/"+job.ID, ro.Key, nil, "", nil); status != 200 || !strings.Contains(string(body), "go forward") {
			t.Errorf("GET /v2/pre-recorded/{id} with the read-only key: %d %s", status, body)
		}
		if status, body := d.do("GET", "/v2/live", ro.Key, nil, "", nil); status != 200 {
			t.Errorf("GET /v2/live with the read-only key: %d %s", status, body)
		}
	})

	t.Run("read-only key refused", func(t *testing.T) {
		for _, r := range []struct {
			method, path, body, scope string
		}{
			{"POST", "/v2/pre-recorded", `{"audio_url":"` + up.AudioURL + `"}`, "jobs:write"},
			{"DELETE", "/v2/pre-recorded/" + job.ID, "", "jobs:write"},
			{"DELETE", "/v2/transcription/" + job.ID, "", "jobs:write"},
			{"GET", "/v2/pre-recorded/" + job.ID + "/file", "", "audio:read"},
			{"GET", "/v2/files/" + up.AudioMetadata.ID, "", "audio:read"},
			{"POST", "/v2/live", `{}`, "live"},
			{"GET", "/admin/keys", "", "admin"},
		} {
			var eb errBody
			status, _ := d.do(r.method, r.path, ro.Key, strings.NewReader(r.body), "application/json", &eb)
			checkError(t, status, eb, 403, r.method+" "+r.path)
			if !strings.Contains(eb.Message, r.scope) || eb.Path != r.path {
				t.Errorf("%s %s: message %q path %q, want the scope %s named", r.method, r.path, eb.Message, eb.Path, r.scope)
			}
		}
		status, _, body := d.upload(ro.Key, path)
		if status != 403 || !strings.Contains(string(body), "jobs:write") {
			t.Errorf("POST /v2/upload with the read-only key: %d %s", status, body)
		}
		// The refused delete deleted nothing; the full key still may.
		if status, _ := d.do("GET", "/v2/pre-recorded/"+job.ID, full, nil, "", nil); status != 200 {
			t.Fatalf("job gone after a refused delete: %d", status)
		}
		if status, _ := d.do("GET", "/v2/pre-recorded/"+job.ID+"/file", full, nil, "", nil); status != 200 {
			t.Errorf("the key made without scopes cannot download audio: %d", status)
		}
	})

	t.Run("grants checked", func(t *testing.T) {
		for _, body := range []string{
			`{"account":"acme","scopes":["jobs:delete"]}`, `{"account":"acme","scopes":[]}`, `{"account":"acme","scopes":"jobs:read"}`,
			`{"account":"acme","scopes":["admin"]}`, `{"account":"acme","expires_at":"2001-01-01T00:00:00Z"}`,
			`{"account":"acme","expires_at":"tomorrow"}`,
		} {
			var eb errBody
			status, _ := d.postJSON("/admin/keys", admin, body, &eb)
			checkError(t, status, eb, 400, "POST /admin/keys "+body)
		}
		// The CLI takes scopes and expiry too.
		out, err := runCLI("keys", "create", "--data-dir", d.DataDir, "--account", "acme", "--scopes", "jobs:read,audio:read", "--expires-at", "1h")
		cliKey := strings.TrimSpace(out)
		if err != nil || !strings.HasPrefix(cliKey, "es_") {
			t.Fatalf("keys create --scopes --expires-at: %v %q", err, out)
		}
		if status, _ := d.do("GET", "/v2/pre-recorded/"+job.ID+"/file", cliKey, nil, "", nil); status != 200 {
			t.Errorf("CLI key with audio:read: file %d", status)
		}
		if status, _ := d.do("DELETE", "/v2/pre-recorded/"+job.ID, cliKey, nil, "", nil); status != 403 {
			t.Errorf("CLI key without jobs:write: delete %d", status)
		}
		if out, err := runCLI("keys", "create", "--data-dir", d.DataDir, "--account", "acme", "--scopes", "jobs:nope"); err == nil {
			t.Errorf("keys create --scopes jobs:nope: %q, want an error", out)
		}
	})

	t.Run("expired key", func(t *testing.T) {
		var short scopedKey
		expires := time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339Nano)
		if status, body := d.postJSON("/admin/keys", admin, map[string]any{"account": "acme", "expires_at": expires}, &short); status != 201 || short.ExpiresAt == nil {
			t.Fatalf("POST /admin/keys expires_at: %d %s", status, body)
		}
		if status, _ := d.do("GET", "/v2/pre-recorded", short.Key, nil, "", nil); status != 200 {
			t.Fatalf("key before its expiry: %d", status)
		}
		deadline := time.Now().Add(15 * time.Second)
		for {
			var eb errBody
			status, _ := d.do("GET", "/v2/pre-recorded", short.Key, nil, "", &eb)
			if status == 401 {
				checkError(t, status, eb, 401, "expired key")
				break
			}
			if status != 200 || time.Now().After(deadline) {
				t.Fatalf("key expiring at %s: %d at %s", expires, status, time.Now().UTC().Format(time.RFC3339Nano))
			}
			time.Sleep(100 * time.Millisecond) // polling a real process until its clock passes the expiry
		}
		var list struct{ Keys []scopedKey }
		d.do("GET", "/admin/keys", admin, nil, "", &list)
		for _, k := range list.Keys {
			if k.ID == short.ID && (k.ExpiresAt == nil || k.RevokedAt != nil) {
				t.Errorf("expired key listed as %+v", k)
			}
			if k.ID == ro.ID && strings.Join(k.Scopes, ",") != "jobs:read" {
				t.Errorf("read-only key listed with scopes %v", k.Scopes)
			}
		}
	})
}
