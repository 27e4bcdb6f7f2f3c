package storetest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/store"
)

func keyCases() []Case {
	return []Case{
		{"KeyAccounts", func(t *testing.T, s store.Store) {
			for _, tc := range []struct {
				account string
				ok      bool
			}{{"acme", true}, {"a.b_c-1", true}, {"A.b_c-9", true}, {strings.Repeat("a", 64), true},
				{"", false}, {strings.Repeat("a", 65), false}, {"a b", false}, {"slash/x", false}, {"é", false}} {
				secret, k, err := s.CreateKey(tc.account, store.KeyGrant{})
				if !tc.ok {
					if !errors.Is(err, store.ErrInvalid) {
						t.Errorf("CreateKey(%q) = %v, want ErrInvalid", tc.account, err)
					}
					continue
				}
				if err != nil || !strings.HasPrefix(secret, store.SecretPrefix) || k.Prefix != secret[:8] || k.Account != tc.account ||
					len(k.ID) != 12 || !k.Active() || k.CreatedAt.IsZero() {
					t.Errorf("CreateKey(%q) = %q, %+v, %v", tc.account, secret, k, err)
				}
				if raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(secret, store.SecretPrefix)); err != nil || len(raw) != 32 {
					t.Errorf("secret %q: not %s + base64url(32 bytes): %v", secret, store.SecretPrefix, err)
				}
				got, err := s.Key(k.ID)
				if err != nil || !reflect.DeepEqual(got, k) {
					t.Errorf("Key(%s) = %+v, %v; want %+v", k.ID, got, err, k)
				}
			}
			if _, err := s.Key("nosuchkey"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Key(unknown) = %v, want ErrNotFound", err)
			}
		}},
		{"AuthenticateAndRevoke", func(t *testing.T, s store.Store) {
			s1, k1, err := s.CreateKey("one", store.KeyGrant{})
			if err != nil {
				t.Fatal(err)
			}
			s2, k2, err := s.CreateKey("two", store.KeyGrant{})
			if err != nil {
				t.Fatal(err)
			}
			if s1 == s2 || k1.ID == k2.ID {
				t.Fatal("two keys share a secret or id")
			}
			for _, tc := range []struct {
				secret, account string
			}{{s1, "one"}, {s2, "two"}, {"es_" + strings.Repeat("A", 43), ""}, {"", ""}, {s1[:len(s1)-1], ""}, {s1[3:], ""}} {
				k, err := s.Authenticate(tc.secret)
				if tc.account == "" {
					if !errors.Is(err, store.ErrUnauthorized) {
						t.Errorf("Authenticate(%q) = %+v, %v; want ErrUnauthorized", tc.secret, k, err)
					}
				} else if err != nil || k.Account != tc.account {
					t.Errorf("Authenticate = %+v, %v; want account %s", k, err, tc.account)
				}
			}
			if err := s.RevokeKey(k1.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Authenticate(s1); !errors.Is(err, store.ErrUnauthorized) {
				t.Errorf("revoked key authenticates: %v", err)
			}
			if _, err := s.Authenticate(s2); err != nil {
				t.Errorf("other key stopped working: %v", err)
			}
			if err := s.RevokeKey("nosuchkey"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("RevokeKey(unknown) = %v, want ErrNotFound", err)
			}
			keys, err := s.Keys()
			if err != nil || len(keys) != 2 || keys[0].ID != k1.ID || keys[1].ID != k2.ID {
				t.Fatalf("Keys() = %+v, %v; want k1 then k2", keys, err)
			}
			if keys[0].Active() || keys[0].RevokedAt.IsZero() || !keys[1].Active() {
				t.Errorf("revocation not listed: %+v", keys)
			}
			revokedAt := keys[0].RevokedAt
			if err := s.RevokeKey(k1.ID); err != nil {
				t.Fatal(err)
			}
			if keys, _ := s.Keys(); !keys[0].RevokedAt.Equal(revokedAt) {
				t.Error("second revoke changed RevokedAt")
			}
		}},
		{"KeyScopes", func(t *testing.T, s store.Store) {
			// Kept as granted, without repeats and in the order of
			// store.Scopes; none granted holds every scope.
			_, all, err := s.CreateKey("acme", store.KeyGrant{})
			if err != nil || all.Scopes != nil || !all.Allows(store.ScopeJobsWrite) || !all.Allows(store.ScopeAdmin) {
				t.Fatalf("CreateKey(no scopes) = %+v, %v; want every scope", all, err)
			}
			secret, ro, err := s.CreateKey("acme", store.KeyGrant{Scopes: []store.Scope{store.ScopeAudioRead, store.ScopeJobsRead, store.ScopeAudioRead}})
			want := []store.Scope{store.ScopeJobsRead, store.ScopeAudioRead}
			if err != nil || !reflect.DeepEqual(ro.Scopes, want) {
				t.Fatalf("CreateKey(read scopes) = %+v, %v; want scopes %v", ro, err, want)
			}
			for name, get := range map[string]func() (store.Key, error){
				"Key":          func() (store.Key, error) { return s.Key(ro.ID) },
				"Authenticate": func() (store.Key, error) { return s.Authenticate(secret) },
			} {
				k, err := get()
				if err != nil || !reflect.DeepEqual(k.Scopes, want) || k.Allows(store.ScopeJobsWrite) || !k.Allows(store.ScopeJobsRead) {
					t.Errorf("%s = %+v, %v; want scopes %v", name, k, err, want)
				}
			}
			if keys, err := s.Keys(); err != nil || len(keys) != 2 || keys[0].Scopes != nil || !reflect.DeepEqual(keys[1].Scopes, want) {
				t.Errorf("Keys() = %+v, %v", keys, err)
			}
			if _, k, err := s.CreateKey(store.AdminAccount, store.KeyGrant{Scopes: []store.Scope{store.ScopeAdmin}}); err != nil || !k.Allows(store.ScopeAdmin) || k.Allows(store.ScopeLive) {
				t.Errorf("CreateKey(admin, [admin]) = %+v, %v", k, err)
			}
			for _, g := range [][]store.Scope{{"jobs:delete"}, {""}, {store.ScopeJobsRead, "JOBS:READ"}} {
				if _, _, err := s.CreateKey("acme", store.KeyGrant{Scopes: g}); !errors.Is(err, store.ErrInvalid) {
					t.Errorf("CreateKey(scopes %q) = %v, want ErrInvalid", g, err)
				}
			}
			if _, _, err := s.CreateKey("acme", store.KeyGrant{Scopes: []store.Scope{store.ScopeAdmin}}); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("CreateKey(acme, [admin]) = %v, want ErrInvalid (admin is the admin account's)", err)
			}
		}},
		{"KeyExpiry", func(t *testing.T, s store.Store) {
			now := time.Now()
			past := now.Add(-time.Second).UTC()
			future := now.Add(time.Hour).UTC()
			old, expired, err := s.CreateKey("acme", store.KeyGrant{ExpiresAt: past})
			if err != nil || !expired.ExpiresAt.Equal(past) || !expired.Expired(now) {
				t.Fatalf("CreateKey(expired) = %+v, %v", expired, err)
			}
			live, valid, err := s.CreateKey("acme", store.KeyGrant{ExpiresAt: future, Scopes: []store.Scope{store.ScopeLive}})
			if err != nil {
				t.Fatal(err)
			}
			if k, err := s.Authenticate(old); !errors.Is(err, store.ErrUnauthorized) {
				t.Errorf("Authenticate(expired key) = %+v, %v; want ErrUnauthorized", k, err)
			}
			k, err := s.Authenticate(live)
			if err != nil || !k.ExpiresAt.Equal(future) || !reflect.DeepEqual(k.Scopes, []store.Scope{store.ScopeLive}) {
				t.Errorf("Authenticate(key expiring in 1h) = %+v, %v; want it, expiring at %v", k, err, future)
			}
			if got, err := s.Key(expired.ID); err != nil || !got.ExpiresAt.Equal(past) || !got.Active() {
				t.Errorf("Key(expired) = %+v, %v; want it listed, expiry kept, not revoked", got, err)
			}
			if got, err := s.Key(valid.ID); err != nil || !reflect.DeepEqual(got, valid) {
				t.Errorf("Key = %+v, %v; want %+v", got, err, valid)
			}
		}},
		{"CallbackSecret", func(t *testing.T, s store.Store) {
			a1, err1 := s.CallbackSecret("a")
			a2, err2 := s.CallbackSecret("a")
			b, err3 := s.CallbackSecret("b")
			if err := errors.Join(err1, err2, err3); err != nil {
				t.Fatal(err)
			}
			if len(a1) != 32 || !bytes.Equal(a1, a2) || bytes.Equal(a1, b) {
				t.Errorf("secrets a1=%x a2=%x b=%x", a1, a2, b)
			}
			if _, err := s.CallbackSecret(""); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("CallbackSecret(\"\") = %v, want ErrInvalid", err)
			}
		}},
		{"TakeCallbackSecrets", func(t *testing.T, s store.Store) {
			a, err1 := s.CallbackSecret("a")
			b, err2 := s.CallbackSecret("b")
			if err := errors.Join(err1, err2); err != nil {
				t.Fatal(err)
			}
			// A sealed store keeps its secrets in its keyring, none in
			// its backend: it takes nothing, and its secrets stay.
			sealed := s.Sealer() != nil
			stop := errors.New("stop")
			err := s.TakeCallbackSecrets(func(string, []byte) error { return stop })
			if sealed && err != nil || !sealed && !errors.Is(err, stop) {
				t.Errorf("a move's error: TakeCallbackSecrets = %v", err)
			}
			got := map[string][]byte{}
			if err := s.TakeCallbackSecrets(func(account string, secret []byte) error {
				got[account] = secret
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			want := map[string][]byte{"a": a, "b": b}
			if sealed {
				want = map[string][]byte{}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("taken %x, want %x", got, want)
			}
			if err := s.TakeCallbackSecrets(func(account string, _ []byte) error {
				t.Errorf("%s taken twice", account)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			a2, err := s.CallbackSecret("a")
			if err != nil || len(a2) != 32 || sealed != bytes.Equal(a, a2) {
				t.Errorf("after the take: %x, %v (before %x; the same only on a sealed store)", a2, err, a)
			}
		}},
	}
}

func jobCases() []Case {
	return []Case{
		{"CreateJobValidation", func(t *testing.T, s store.Store) {
			mustCreate(t, s, newJob("dup", "a", store.KindLive, store.StatusQueued, t0))
			withRaw := func(id string, params, result string) *store.Job {
				j := newJob(id, "a", store.KindLive, store.StatusDone, t0)
				j.Params, j.Result = json.RawMessage(params), json.RawMessage(result)
				return j
			}
			for _, tc := range []struct {
				name string
				job  *store.Job
				want error
			}{
				{"ok", newJob("ok", "a", store.KindPreRecorded, store.StatusQueued, t0), nil},
				{"duplicate", newJob("dup", "a", store.KindPreRecorded, store.StatusQueued, t0), store.ErrExists},
				{"empty id", newJob("", "a", store.KindLive, store.StatusQueued, t0), store.ErrInvalid},
				{"long id", newJob(strings.Repeat("x", 257), "a", store.KindLive, store.StatusQueued, t0), store.ErrInvalid},
				{"empty account", newJob("x1", "", store.KindLive, store.StatusQueued, t0), store.ErrInvalid},
				{"empty kind", newJob("x2", "a", "", store.StatusQueued, t0), store.ErrInvalid},
				{"unknown kind", newJob("x3", "a", "batch", store.StatusQueued, t0), store.ErrInvalid},
				{"empty status", newJob("x4", "a", store.KindLive, "", t0), store.ErrInvalid},
				{"unknown status", newJob("x5", "a", store.KindLive, "paused", t0), store.ErrInvalid},
				{"zero created", newJob("x6", "a", store.KindLive, store.StatusQueued, time.Time{}), store.ErrInvalid},
				{"nil", nil, store.ErrInvalid},
				{"bad result JSON", withRaw("x7", "", `{"a":`), store.ErrInvalid},
				{"bad params JSON", withRaw("x8", "nope", ""), store.ErrInvalid},
			} {
				err := s.CreateJob(tc.job)
				if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
					t.Errorf("%s: CreateJob = %v, want %v", tc.name, err, tc.want)
				}
			}
			if n, _ := s.CountJobs(store.KindLive, ""); n != 1 {
				t.Errorf("failed creates left %d live jobs, want 1", n)
			}
		}},
		{"JobRoundTrip", func(t *testing.T, s store.Store) {
			name, dur, ch := "call.wav", 12.5, 2
			in := &store.Job{
				ID: "j1", Account: "acme", KeyID: "k1", Kind: store.KindPreRecorded, Status: store.StatusDone, RequestID: "r1",
				CreatedAt: t0, CompletedAt: t0.Add(1500 * time.Millisecond),
				ErrorCode: 422, ErrorMessage: "bad \u0000 audio",
				CustomMetadata:      store.Metadata{"team": "blue", "n": json.Number("3"), "nul": "a\u0000b", "nested": map[string]any{"a": []any{json.Number("1.0"), "x"}}}, // numbers as params keeps them
				Params:              json.RawMessage(`{"audio_url":"http://x/a.wav",  "diarization":true}`),
				File:                &store.File{ID: "f1", Filename: &name, AudioDuration: &dur, Channels: &ch},
				Result:              json.RawMessage(`{"transcription":{"full_transcript":"hello"}}`),
				PostSessionMetadata: store.Metadata{"k": "v"},
				Blob:                "j1.wav",
				Attempts:            2,
			}
			mustCreate(t, s, in)
			got, err := s.Job("j1")
			if err != nil {
				t.Fatal(err)
			}
			if !got.CreatedAt.Equal(t0) || got.CreatedAt.Location() != time.UTC || got.CreatedAt.Nanosecond() != t0.Nanosecond() {
				t.Errorf("CreatedAt = %v, want %v in UTC with nanoseconds", got.CreatedAt, t0)
			}
			want := *in
			want.CreatedAt, want.CompletedAt = t0.UTC(), in.CompletedAt.UTC()
			if !reflect.DeepEqual(got, &want) {
				t.Errorf("round trip:\n got %+v\nwant %+v", got, &want)
			}
			if string(got.Params) != string(in.Params) {
				t.Errorf("Params not kept byte for byte: %s", got.Params)
			}
			fj, _ := json.Marshal(got.File)
			if string(fj) != `{"id":"f1","filename":"call.wav","source":null,"audio_duration":12.5,"number_of_channels":2}` {
				t.Errorf("File JSON = %s", fj)
			}
			if _, err := s.Job("nope"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Job(unknown) = %v, want ErrNotFound", err)
			}
		}},
		{"UpdateJob", testUpdateJob},
		{"DeleteJob", func(t *testing.T, s store.Store) {
			j := newJob("j", "acme", store.KindPreRecorded, store.StatusQueued, t0)
			j.Blob = "j-audio"
			other := newJob("k", "acme", store.KindPreRecorded, store.StatusQueued, t0.Add(time.Second))
			other.Blob = "k-audio"
			writeBlob(t, s, "j-audio", "audio")
			writeBlob(t, s, "k-audio", "audio")
			mustCreate(t, s, j, other)
			for _, d := range []*store.Delivery{{JobID: "j", URL: "http://a/"}, {JobID: "j", URL: "http://b/"}, {JobID: "k", URL: "http://c/"}} {
				if err := s.EnqueueDelivery(d); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.DeleteJob("j"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Job("j"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Job after delete = %v, want ErrNotFound", err)
			}
			if err := s.DeleteJob("j"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("second DeleteJob = %v, want ErrNotFound", err)
			}
			if blobExists(t, s, "j-audio") || !blobExists(t, s, "k-audio") {
				t.Error("DeleteJob did not remove exactly its own blob")
			}
			if _, err := s.OpenBlob("j-audio"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("blob after delete: %v, want ErrNotFound", err)
			}
			if n, _ := s.PendingDeliveries(); n != 1 {
				t.Errorf("PendingDeliveries = %d, want 1 (only k's)", n)
			}
			if got, err := s.ClaimNext(store.KindPreRecorded); err != nil || got.ID != "k" {
				t.Errorf("ClaimNext = %v, %v; want k", got, err)
			}
			if list, _ := s.ListJobs(store.ListQuery{Account: "acme", Kind: store.KindPreRecorded}); len(list) != 1 {
				t.Errorf("ListJobs after delete = %v", ids(list))
			}
		}},
	}
}

func testUpdateJob(t *testing.T, s store.Store) {
	mustCreate(t, s, newJob("j", "acme", store.KindPreRecorded, store.StatusQueued, t0))
	boom := errors.New("boom")
	for _, tc := range []struct {
		name string
		fn   func(j *store.Job) ([]*store.Delivery, error)
		want error
	}{
		{"change id", func(j *store.Job) ([]*store.Delivery, error) { j.ID = "k"; return nil, nil }, store.ErrInvalid},
		{"change account", func(j *store.Job) ([]*store.Delivery, error) { j.Account = "x"; return nil, nil }, store.ErrInvalid},
		{"change kind", func(j *store.Job) ([]*store.Delivery, error) { j.Kind = store.KindLive; return nil, nil }, store.ErrInvalid},
		{"change created", func(j *store.Job) ([]*store.Delivery, error) {
			j.CreatedAt = j.CreatedAt.Add(time.Nanosecond)
			return nil, nil
		}, store.ErrInvalid},
		{"bad status", setStatus("paused"), store.ErrInvalid},
		{"fn error", func(j *store.Job) ([]*store.Delivery, error) { j.Status = store.StatusDone; return nil, boom }, boom},
		{"bad delivery", func(j *store.Job) ([]*store.Delivery, error) {
			j.Status = store.StatusDone
			return []*store.Delivery{{URL: ""}}, nil
		}, store.ErrInvalid},
	} {
		if _, err := s.UpdateJob("j", tc.fn); !errors.Is(err, tc.want) {
			t.Fatalf("%s: UpdateJob = %v, want %v", tc.name, err, tc.want)
		}
		j, err := s.Job("j")
		if err != nil || j.Status != store.StatusQueued || j.ID != "j" {
			t.Fatalf("%s: rejected update was written: %+v %v", tc.name, j, err)
		}
		if n, _ := s.PendingDeliveries(); n != 0 {
			t.Fatalf("%s: rejected update enqueued %d deliveries", tc.name, n)
		}
	}
	if _, err := s.UpdateJob("nope", setStatus(store.StatusDone)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("UpdateJob(unknown) = %v, want ErrNotFound", err)
	}
	d := &store.Delivery{URL: "http://cb/", Body: []byte(`{"id":"j"}`)}
	got, err := s.UpdateJob("j", func(j *store.Job) ([]*store.Delivery, error) {
		j.Status = store.StatusDone
		j.CompletedAt = t0.Add(time.Minute)
		j.Result = json.RawMessage(`{"ok":true}`)
		return []*store.Delivery{d, nil}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != store.StatusDone || string(got.Result) != `{"ok":true}` {
		t.Errorf("UpdateJob returned %+v", got)
	}
	if stored, _ := s.Job("j"); stored.Status != store.StatusDone || string(stored.Result) != `{"ok":true}` {
		t.Errorf("UpdateJob stored %+v", stored)
	}
	if d.ID == "" || d.JobID != "j" || d.Account != "acme" || d.Method != "POST" {
		t.Errorf("delivery defaults not filled: %+v", d)
	}
	due, err := s.DueDeliveries(time.Now(), 0)
	if err != nil || len(due) != 1 || due[0].ID != d.ID || string(due[0].Body) != `{"id":"j"}` {
		t.Errorf("DueDeliveries = %v, %v", due, err)
	}
	if _, err := s.ClaimNext(store.KindPreRecorded); !errors.Is(err, store.ErrEmpty) {
		t.Errorf("done job still claimable: %v", err)
	}
	if n, _ := s.CountJobs(store.KindPreRecorded, store.StatusDone); n != 1 {
		t.Errorf("CountJobs(done) = %d, want 1", n)
	}
	if n, _ := s.CountJobs(store.KindPreRecorded, store.StatusQueued); n != 0 {
		t.Errorf("CountJobs(queued) = %d, want 0", n)
	}
}
