package e2e

import (
	"strings"
	"testing"
	"time"
)

type adminKey struct {
	ID        string  `json:"id"`
	Account   string  `json:"account"`
	Prefix    string  `json:"prefix"`
	Admin     bool    `json:"admin"`
	CreatedAt string  `json:"created_at"`
	RevokedAt *string `json:"revoked_at"`
	Key       string  `json:"key"`
}

// TestAdminKeys: an admin key (account "admin") creates, lists and revokes
// keys over HTTP, sharing one store with the CLI; a created key works at
// once and a revoked one stops at once; other keys get 403 and no key or a
// bad one 401, all with the contract's error body; no secret is ever
// listed or logged.
func TestAdminKeys(t *testing.T) {
	d := startDaemon(t, "", "")
	admin := createKey(t, d.DataDir, "admin")
	user := createKey(t, d.DataDir, "acme")

	t.Run("refusals", func(t *testing.T) {
		for _, r := range []struct {
			method, path, key string
			want              int
		}{
			{"POST", "/admin/keys", "", 401}, {"GET", "/admin/keys", "", 401}, {"DELETE", "/admin/keys/abc", "", 401},
			{"POST", "/admin/keys", "es_not-a-key", 401}, {"GET", "/admin/keys", "garbage", 401},
			{"POST", "/admin/keys", user, 403}, {"GET", "/admin/keys", user, 403}, {"DELETE", "/admin/keys/abc", user, 403},
		} {
			var eb errBody
			status, _ := d.do(r.method, r.path, r.key, strings.NewReader(`{"account":"x"}`), "application/json", &eb)
			checkError(t, status, eb, r.want, r.method+" "+r.path)
			if eb.Path != r.path {
				t.Errorf("%s %s: error body path %q", r.method, r.path, eb.Path)
			}
		}
		for _, body := range []string{`{}`, `{"account":""}`, `{"account":"a b"}`, `{"account":7}`, `{"account":"ok","admin":true}`, `[`, `{"account":"a"} {}`} {
			var eb errBody
			status, _ := d.postJSON("/admin/keys", admin, body, &eb)
			checkError(t, status, eb, 400, "POST /admin/keys "+body)
		}
		var eb errBody
		status, _ := d.do("DELETE", "/admin/keys/000000000000", admin, nil, "", &eb)
		checkError(t, status, eb, 404, "DELETE unknown key")
	})

	var created adminKey
	status, body := d.postJSON("/admin/keys", admin, map[string]any{"account": "team-b"}, &created)
	if status != 201 || !strings.HasPrefix(created.Key, "es_") || created.Account != "team-b" || created.ID == "" ||
		created.Admin || created.RevokedAt != nil || !strings.HasPrefix(created.Key, created.Prefix) {
		t.Fatalf("POST /admin/keys: %d %s", status, body)
	}
	if _, err := time.Parse(time.RFC3339, created.CreatedAt); err != nil {
		t.Errorf("created_at %q", created.CreatedAt)
	}
	if status, body := d.do("GET", "/v2/pre-recorded", created.Key, nil, "", nil); status != 200 {
		t.Fatalf("the new key on /v2: %d %s", status, body)
	}

	// The list shows every key (the CLI's included), no secrets.
	var list struct{ Keys []adminKey }
	status, body = d.do("GET", "/admin/keys", admin, nil, "", &list)
	if status != 200 || len(list.Keys) != 3 {
		t.Fatalf("GET /admin/keys: %d %s", status, body)
	}
	for _, secret := range []string{admin, user, created.Key} {
		if strings.Contains(string(body), secret) {
			t.Errorf("GET /admin/keys shows a secret: %s", body)
		}
	}
	accounts := map[string]bool{}
	for _, k := range list.Keys {
		accounts[k.Account] = k.Admin
		if k.Key != "" || k.RevokedAt != nil {
			t.Errorf("listed key %+v", k)
		}
	}
	if adm, ok := accounts["admin"]; !ok || !adm || accounts["acme"] || accounts["team-b"] {
		t.Errorf("listed accounts/admin flags %v", accounts)
	}
	out, err := runCLI("keys", "list", "--data-dir", d.DataDir)
	if err != nil || !strings.Contains(out, created.ID+"\tteam-b\t") {
		t.Errorf("the CLI does not list the key made over HTTP: %v %q", err, out)
	}

	// Revocation takes effect at once, and shows in the list.
	if status, body := d.do("DELETE", "/admin/keys/"+created.ID, admin, nil, "", nil); status != 202 || len(body) != 0 {
		t.Fatalf("DELETE /admin/keys/%s: %d %q", created.ID, status, body)
	}
	var eb errBody
	status, _ = d.do("GET", "/v2/pre-recorded", created.Key, nil, "", &eb)
	checkError(t, status, eb, 401, "the revoked key")
	d.do("GET", "/admin/keys", admin, nil, "", &list)
	for _, k := range list.Keys {
		if k.ID == created.ID && (k.RevokedAt == nil || k.Admin) {
			t.Errorf("revoked key listed as %+v", k)
		}
	}
	// Revoking again is idempotent.
	if status, _ := d.do("DELETE", "/admin/keys/"+created.ID, admin, nil, "", nil); status != 202 {
		t.Errorf("second DELETE: %d", status)
	}

	// An admin key made over HTTP is one (account admin), and works at once.
	var second adminKey
	if status, body := d.postJSON("/admin/keys", admin, map[string]any{"account": "admin"}, &second); status != 201 || !second.Admin {
		t.Fatalf("POST /admin/keys admin: %d %s", status, body)
	}
	if status, _ := d.do("GET", "/admin/keys", second.Key, nil, "", nil); status != 200 {
		t.Errorf("the second admin key: %d", status)
	}

	// The audit lines name key ids, never secrets.
	d.WaitLog(10*time.Second, `"msg":"key created"`, `"key_id":"`+created.ID+`"`)
	d.WaitLog(10*time.Second, `"msg":"key revoked"`, `"key_id":"`+created.ID+`"`)
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, l := range d.lines {
		for _, secret := range []string{admin, user, created.Key, second.Key} {
			if strings.Contains(l, secret) {
				t.Errorf("a log line holds a secret: %s", l)
			}
		}
	}
}
