package bolt

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/store"

	"go.etcd.io/bbolt"
)

func openInternal(t *testing.T, dir string, migs []migration) *DB {
	t.Helper()
	db, err := open(dir, &Options{NoSync: true}, migs)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func TestMigrations(t *testing.T) {
	dir := t.TempDir()
	runs := 0
	v2 := migration{name: "add bucket x", up: func(tx *bbolt.Tx) error {
		runs++
		_, err := tx.CreateBucket([]byte("x"))
		return err
	}}
	db := openInternal(t, dir, migrations())
	db.Close()

	// Upgrading runs only the new migration, once.
	for range 2 {
		db = openInternal(t, dir, append(migrations(), v2))
		if v, err := db.SchemaVersion(); err != nil || v != len(migrations())+1 {
			t.Fatalf("SchemaVersion = %d, %v; want %d", v, err, len(migrations())+1)
		}
		db.Close()
	}
	if runs != 1 {
		t.Errorf("migration 2 ran %d times, want 1", runs)
	}

	// An older build refuses the newer file.
	if _, err := open(dir, &Options{NoSync: true}, migrations()); !errors.Is(err, store.ErrSchemaTooNew) {
		t.Errorf("old build Open: %v, want ErrSchemaTooNew", err)
	}

	// A failing migration leaves the file as it was.
	boom := errors.New("boom")
	v3 := migration{name: "fails", up: func(tx *bbolt.Tx) error {
		if _, err := tx.CreateBucket([]byte("y")); err != nil {
			return err
		}
		return boom
	}}
	if _, err := open(dir, &Options{NoSync: true}, append(migrations(), v2, v3)); !errors.Is(err, boom) {
		t.Fatalf("Open with failing migration: %v", err)
	}
	db = openInternal(t, dir, append(migrations(), v2))
	defer db.Close()
	if v, _ := db.SchemaVersion(); v != len(migrations())+1 {
		t.Errorf("SchemaVersion after failed migration = %d, want %d", v, len(migrations())+1)
	}
	_ = db.bolt.View(func(tx *bbolt.Tx) error {
		if tx.Bucket([]byte("y")) != nil {
			t.Error("failed migration's bucket was committed")
		}
		return nil
	})
}

// TestCheckDetectsCorruption damages one cross-reference at a time and
// expects Check to notice.
func TestCheckDetectsCorruption(t *testing.T) {
	created := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	tests := []struct {
		name   string
		damage func(tx *bbolt.Tx) error
	}{
		{"index entry missing", func(tx *bbolt.Tx) error {
			return tx.Bucket(bucketJobIndex).Delete(jobIndexKey(&store.Job{ID: "q", Account: "a", Kind: store.KindPreRecorded, CreatedAt: created}))
		}},
		{"index entry wrong status", func(tx *bbolt.Tx) error {
			return tx.Bucket(bucketJobIndex).Put(jobIndexKey(&store.Job{ID: "q", Account: "a", Kind: store.KindPreRecorded, CreatedAt: created}), []byte("done"))
		}},
		{"stray index entry", func(tx *bbolt.Tx) error {
			return tx.Bucket(bucketJobIndex).Put(jobIndexKey(&store.Job{ID: "ghost", Account: "a", Kind: store.KindLive, CreatedAt: created}), []byte("done"))
		}},
		{"queue entry missing", func(tx *bbolt.Tx) error {
			return tx.Bucket(bucketQueue).Delete(queueKey(&store.Job{ID: "q", Kind: store.KindPreRecorded, CreatedAt: created}))
		}},
		{"queue entry for done job", func(tx *bbolt.Tx) error {
			return tx.Bucket(bucketQueue).Put(queueKey(&store.Job{ID: "d", Kind: store.KindPreRecorded, CreatedAt: created}), nil)
		}},
		{"status entry missing", func(tx *bbolt.Tx) error {
			return tx.Bucket(bucketJobStatus).Delete(statusKey(&store.Job{ID: "d", Kind: store.KindPreRecorded, Status: store.StatusDone, CreatedAt: created}))
		}},
		{"counter off", func(tx *bbolt.Tx) error { return addCount(tx, store.KindLive, store.StatusDone, 1) }},
		{"job record undecodable", func(tx *bbolt.Tx) error { return tx.Bucket(bucketJobs).Put([]byte("d"), []byte("{")) }},
		{"job record missing", func(tx *bbolt.Tx) error { return tx.Bucket(bucketJobs).Delete([]byte("d")) }},
		{"delivery due entry missing", func(tx *bbolt.Tx) error {
			c := tx.Bucket(bucketDeliveryDue).Cursor()
			k, _ := c.First()
			return tx.Bucket(bucketDeliveryDue).Delete(k)
		}},
		{"delivery job entry stray", func(tx *bbolt.Tx) error {
			return tx.Bucket(bucketDeliveryJob).Put([]byte("zzz"), nil)
		}},
		{"key hash missing", func(tx *bbolt.Tx) error {
			c := tx.Bucket(bucketKeyHash).Cursor()
			k, _ := c.First()
			return tx.Bucket(bucketKeyHash).Delete(k)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := openInternal(t, t.TempDir(), migrations())
			defer db.Close()
			for _, j := range []*store.Job{
				{ID: "q", Account: "a", Kind: store.KindPreRecorded, Status: store.StatusQueued, CreatedAt: created},
				{ID: "d", Account: "a", Kind: store.KindPreRecorded, Status: store.StatusDone, CreatedAt: created},
			} {
				if err := db.CreateJob(j); err != nil {
					t.Fatal(err)
				}
			}
			if err := db.EnqueueDelivery(&store.Delivery{JobID: "d", URL: "http://x/"}); err != nil {
				t.Fatal(err)
			}
			if _, _, err := db.CreateKey("a", store.KeyGrant{}); err != nil {
				t.Fatal(err)
			}
			if err := db.Check(); err != nil {
				t.Fatalf("Check before damage: %v", err)
			}
			if err := db.bolt.Update(tc.damage); err != nil {
				t.Fatal(err)
			}
			err := db.Check()
			if !errors.Is(err, store.ErrCorrupt) {
				t.Fatalf("Check after damage: %v, want ErrCorrupt", err)
			}
			t.Logf("Check found: %v", err)
		})
	}
}

func TestEncTimeOrders(t *testing.T) {
	times := []time.Time{
		{},
		time.Date(1700, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Unix(-1, 999999999),
		time.Unix(0, 0),
		time.Unix(0, 1),
		time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 1, 1, 0, 0, 0, 1, time.UTC),
		time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	var prev []byte
	for i, tm := range times {
		b := appendTime(nil, tm)
		if i > 0 && bytes.Compare(prev, b) >= 0 {
			t.Errorf("%s does not sort after %s", tm, times[i-1])
		}
		prev = b
	}
}

func TestPrefixEnd(t *testing.T) {
	tests := []struct {
		in, want []byte
	}{
		{[]byte{1, 2}, []byte{1, 3}},
		{[]byte{1, 0xff}, []byte{2}},
		{[]byte{0xff, 0xff}, nil},
		{[]byte{}, nil},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%x", tc.in), func(t *testing.T) {
			if got := prefixEnd(tc.in); !slices.Equal(got, tc.want) {
				t.Errorf("prefixEnd(%x) = %x, want %x", tc.in, got, tc.want)
			}
		})
	}
}

func TestMetadataMatches(t *testing.T) {
	md := map[string]any{"s": "abc", "n": 5.0, "f": 2.5, "b": true, "z": nil, "o": map[string]any{"k": "v"}, "num": "5"}
	tests := []struct {
		filter map[string]string
		want   bool
	}{
		{map[string]string{}, true},
		{map[string]string{"s": "abc"}, true},
		{map[string]string{"s": "\"abc\""}, false},
		{map[string]string{"n": "5"}, true},
		{map[string]string{"n": "5.0"}, true},
		{map[string]string{"n": "6"}, false},
		{map[string]string{"f": "2.5"}, true},
		{map[string]string{"b": "true"}, true},
		{map[string]string{"b": "false"}, false},
		{map[string]string{"z": "null"}, true},
		{map[string]string{"o": `{"k":"v"}`}, true},
		{map[string]string{"num": "5"}, true},
		{map[string]string{"missing": "x"}, false},
		{map[string]string{"s": "abc", "n": "5"}, true},
		{map[string]string{"s": "abc", "n": "4"}, false},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.filter), func(t *testing.T) {
			if got := store.MetadataMatches(md, tc.filter); got != tc.want {
				t.Errorf("store.MetadataMatches(%v) = %t, want %t", tc.filter, got, tc.want)
			}
		})
	}
}

func TestCopyBlobFallback(t *testing.T) {
	db := openInternal(t, t.TempDir(), migrations())
	defer db.Close()
	if _, err := db.WriteBlob("src", bytes.NewReader([]byte("hello")), 0); err != nil {
		t.Fatal(err)
	}
	tmp := db.BlobPath(store.TempBlobPrefix + "copy")
	if err := db.copyBlob(db.BlobPath("src"), tmp); err != nil {
		t.Fatal(err)
	}
	if err := db.commitTemp(tmp, "dst"); err != nil {
		t.Fatal(err)
	}
	f, err := db.OpenBlob("dst")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 10)
	n, _ := f.Read(buf)
	if string(buf[:n]) != "hello" {
		t.Errorf("copied blob = %q", buf[:n])
	}
	if err := db.copyBlob(db.BlobPath("nope"), tmp); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("copy of missing blob: %v", err)
	}
}

// FuzzUnmarshalJob feeds arbitrary records to the job decoder: no panic,
// and whatever decodes encodes back to a record that decodes the same.
func FuzzUnmarshalJob(f *testing.F) {
	good, _ := marshalJob(&store.Job{ID: "j", Account: "a", Kind: store.KindLive, Status: store.StatusDone,
		CreatedAt: time.Unix(1, 2).UTC(), Params: []byte(`{"x":1}`), Result: []byte(`[1,2]`),
		CustomMetadata: map[string]any{"k": "v"}})
	f.Add(good)
	f.Add([]byte{jobFormat, 2, '{', '}', 0, 0})
	f.Add([]byte{jobFormat, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Add([]byte("{}"))
	f.Fuzz(func(t *testing.T, v []byte) {
		var j store.Job
		if err := unmarshalJob(v, &j); err != nil {
			return
		}
		again, err := marshalJob(&j)
		if err != nil {
			return // e.g. a Params part that is not JSON
		}
		var k store.Job
		if err := unmarshalJob(again, &k); err != nil {
			t.Fatalf("re-encoded record does not decode: %v", err)
		}
		a, _ := marshalJob(&k)
		if !bytes.Equal(a, again) {
			t.Fatalf("round trip differs:\n%q\n%q", again, a)
		}
	})
}
