package postgres_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/postgres"
	"github.com/earshot-dev/earshot/store/sealed"
)

// keyFile makes a key file in dir and loads it.
func keyFile(t *testing.T, dir, name string) *sealed.KEK {
	t.Helper()
	path := filepath.Join(dir, name)
	if _, err := sealed.GenerateKeyFile(path); err != nil {
		t.Fatal(err)
	}
	k, err := sealed.LoadKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// sealedNode opens the database dsn as node id, sealed under kek with the
// keyring in the database.
func sealedNode(t *testing.T, dsn, id string, kek *sealed.KEK) *sealed.Store {
	t.Helper()
	db := openNode(t, dsn, id)
	s, err := sealed.Open(db, sealed.Options{Keys: []*sealed.KEK{kek}, Keyring: db.Keyring()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func sealedJob(t *testing.T, s store.Store, id, text string) {
	t.Helper()
	j := job(id, "acme", store.KindPreRecorded, store.StatusDone, time.Now())
	j.Result = json.RawMessage(`{"text":"` + text + `"}`)
	if err := s.CreateJob(j); err != nil {
		t.Fatal(err)
	}
}

func readResult(s store.Store, id string) (string, error) {
	j, err := s.Job(id)
	if err != nil {
		return "", err
	}
	return string(j.Result), nil
}

// TestKeyringShared: two sealed nodes on one database share the data
// keys: what A seals B opens; a delete on B leaves no row of the key; a
// rotation started on A (cut short, resumable) is followed by B, which has
// only the old key configured: it opens keys A wrapped under the new key
// and wraps its own under it, reading the new key's file the rotation
// names; a second rotation meanwhile is refused; B finishes the rotation
// and every row is under the new key.
func TestKeyringShared(t *testing.T) {
	dsn := pg.NewDatabase(t)
	dir := t.TempDir()
	k1 := keyFile(t, dir, "k1")
	a, b := sealedNode(t, dsn, "a", k1), sealedNode(t, dsn, "b", k1)
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows := func(q string, args ...any) int {
		var n int
		if err := conn.QueryRow(t.Context(), q, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	sealedJob(t, a, "j1", "mutton")
	if got, err := readResult(b, "j1"); err != nil || got != `{"text":"mutton"}` {
		t.Fatalf("A's job read on B = %q, %v", got, err)
	}
	if n := rows("SELECT count(*) FROM jobs WHERE id = 'j1' AND result::text LIKE '%mutton%'"); n != 0 {
		t.Fatal("the job's result is in clear in the jobs table")
	}
	sealedJob(t, a, "j2", "gone")
	if err := b.DeleteJob("j2"); err != nil {
		t.Fatal(err)
	}
	if n := rows("SELECT count(*) FROM data_keys WHERE id = 'j:j2'"); n != 0 {
		t.Fatalf("deleted job's data key rows = %d", n)
	}
	// The VACUUM Delete runs after a batch of deletions runs outside any
	// transaction block, as PostgreSQL requires.
	if err := openNode(t, dsn, "c").Keyring().Vacuum(); err != nil {
		t.Fatal(err)
	}

	// A rotation to k2 recorded and cut short on A.
	k2 := keyFile(t, dir, "k2")
	cut, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := a.Rotate(cut, k2); !errors.Is(err, context.Canceled) {
		t.Fatalf("Rotate with a cancelled context = %v", err)
	}
	sealedJob(t, a, "j3", "under k2")
	if n := rows("SELECT count(*) FROM data_keys WHERE id = 'j:j3' AND kek = $1", k2.ID()); n != 1 {
		t.Fatal("A's new data key is not under the rotation's key")
	}
	if got, err := readResult(b, "j3"); err != nil || got != `{"text":"under k2"}` {
		t.Fatalf("B (k1 configured) reading a key under the rotation's k2 = %q, %v", got, err)
	}
	sealedJob(t, b, "j4", "b under k2")
	if n := rows("SELECT count(*) FROM data_keys WHERE id = 'j:j4' AND kek = $1", k2.ID()); n != 1 {
		t.Fatal("B's new data key is not under the rotation's key")
	}
	if _, err := b.Rotate(t.Context(), keyFile(t, dir, "k3")); !errors.Is(err, postgres.ErrRotating) {
		t.Fatalf("a second rotation while one runs = %v, want ErrRotating", err)
	}
	if _, err := b.Rotate(t.Context(), k2); err != nil {
		t.Fatal(err)
	}
	if n := rows("SELECT count(*) FROM data_keys WHERE kek <> $1", k2.ID()); n != 0 {
		t.Fatalf("%d data keys not under k2 after the rotation", n)
	}
	if n := rows("SELECT count(*) FROM data_key_rotation"); n != 0 {
		t.Fatal("the rotation is still recorded after it finished")
	}
	for _, id := range []string{"j1", "j3", "j4"} {
		if _, err := readResult(a, id); err != nil {
			t.Fatalf("A reading %s after the rotation: %v", id, err)
		}
	}
}

// TestCallbackSecretShared: sealed nodes on one database keep each
// account's callback secret as one row of data_keys, none in
// callback_secrets: a secret the database held before it was sealed is
// moved by the first node to open it, the same bytes; nodes making an
// account's secret at once all get the first one's (Keyring.Add: the
// first insert wins).
func TestCallbackSecretShared(t *testing.T) {
	dsn := pg.NewDatabase(t)
	plain := openNode(t, dsn, "plain")
	old, err := plain.CallbackSecret("old")
	if err != nil {
		t.Fatal(err)
	}
	kek := keyFile(t, t.TempDir(), "kek")
	a, b := sealedNode(t, dsn, "a", kek), sealedNode(t, dsn, "b", kek)
	for _, s := range []*sealed.Store{a, b} {
		if got, err := s.CallbackSecret("old"); err != nil || !bytes.Equal(got, old) {
			t.Errorf("the secret made before sealing: %x, %v; want %x", got, err, old)
		}
	}
	got := make([][]byte, 8)
	var wg sync.WaitGroup
	for i := range got {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Go(func() {
			var err error
			if got[i], err = s.CallbackSecret("new"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for i := range got {
		if len(got[i]) != 32 || !bytes.Equal(got[i], got[0]) {
			t.Errorf("call %d: %x, want one secret for all (%x)", i, got[i], got[0])
		}
	}
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var clearRows int
	if err := conn.QueryRow(t.Context(), "SELECT count(*) FROM callback_secrets").Scan(&clearRows); err != nil {
		t.Fatal(err)
	}
	if clearRows != 0 {
		t.Errorf("%d callback secrets in clear in the database", clearRows)
	}
}

// TestKeyringKEKsAndAdd: KEKs lists the keys wrapping the rows, each once,
// sorted, in one query (sealed.Open checks them so: before, one query per
// data key, 2.9 s for 20,000 keys on a local PostgreSQL, 6 ms after);
// Add inserts only an id that has no row.
func TestKeyringKEKsAndAdd(t *testing.T) {
	ring := openNode(t, pg.NewDatabase(t), "a").Keyring()
	for i, kek := range []string{"bbbb", "aaaa", "bbbb"} {
		if err := ring.Put("j:"+string(rune('1'+i)), sealed.Entry{KEK: kek, Wrapped: []byte("w")}); err != nil {
			t.Fatal(err)
		}
	}
	if got := ring.KEKs(); len(got) != 2 || got[0] != "aaaa" || got[1] != "bbbb" {
		t.Errorf("KEKs %v", got)
	}
	if err := ring.Add("c:acme", sealed.Entry{KEK: "cccc", Wrapped: []byte("1")}); err != nil {
		t.Fatal(err)
	}
	if err := ring.Add("c:acme", sealed.Entry{KEK: "cccc", Wrapped: []byte("2")}); !errors.Is(err, store.ErrExists) {
		t.Errorf("a second Add: %v, want ErrExists", err)
	}
	if e, _ := ring.Get("c:acme"); string(e.Wrapped) != "1" {
		t.Errorf("a refused Add replaced the row: %q", e.Wrapped)
	}
}
