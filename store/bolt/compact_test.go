package bolt_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/bolt"
)

// TestCompact: a record rewritten in place leaves its old bytes in
// bbolt's free pages, in the file; Compact puts a file without them in
// place and zeroes the old one, the store opens with every record, key
// and audit entry (their sequences) as they were, and a store held open
// is store.ErrLocked. Before (until 2026-11-30) nothing took what a
// sealed rewrite left behind out of the database file.
func TestCompact(t *testing.T) {
	dir := t.TempDir()
	db, err := bolt.Open(dir, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	// Records rewritten or deleted: what the last transactions freed is
	// not reused before the file closes.
	pad := bytes.Repeat([]byte("x"), 3000)
	for i := range 40 {
		id := string(rune('a'+i%26)) + string(rune('0'+i/26))
		j := newJob(id, "acme", store.KindPreRecorded, store.StatusDone, t0)
		j.Result = json.RawMessage(`{"words":"ZEBRAQUOKKA said by ` + id + `","pad":"` + string(pad) + `"}`)
		mustCreate(t, db, j)
	}
	for i := range 40 {
		id := string(rune('a'+i%26)) + string(rune('0'+i/26))
		if i%2 == 0 {
			if err := db.DeleteJob(id); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if _, err := db.UpdateJob(id, func(j *store.Job) ([]*store.Delivery, error) {
			j.Result = json.RawMessage(`{"words":"sealed now"}`)
			return nil, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.AppendAudit(&store.AuditEntry{Action: store.AuditKeyCreate}, &store.AuditEntry{Action: store.AuditKeyRevoke}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := bolt.Compact(dir, nil); !errors.Is(err, store.ErrLocked) {
		t.Fatalf("Compact of a store held open: %v, want ErrLocked", err)
	}
	db.Close()
	path := filepath.Join(dir, "earshot.db")
	if b, _ := os.ReadFile(path); !bytes.Contains(b, []byte("ZEBRAQUOKKA")) {
		t.Fatal("the old results are not in the file before: the test shows nothing")
	}
	old, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()

	before, after, err := bolt.Compact(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d -> %d bytes", before, after)
	if b, _ := os.ReadFile(path); bytes.Contains(b, []byte("ZEBRAQUOKKA")) {
		t.Error("the compacted file holds the old results")
	}
	if b := make([]byte, before); func() bool { _, err := old.ReadAt(b, 0); return err != nil }() || !bytes.Equal(b, make([]byte, before)) {
		t.Error("the old file was not zeroed")
	}
	if _, err := os.Stat(path + ".compact"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("left %s.compact: %v", path, err)
	}
	db, err = bolt.Open(dir, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if j, err := db.Job("b0"); err != nil || string(j.Result) != `{"words":"sealed now"}` {
		t.Errorf("job b0 after: %v %+v", err, j)
	}
	if _, err := db.Job("a0"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("job a0 after: %v", err)
	}
	if n, err := db.CountJobs(store.KindPreRecorded, store.StatusDone); err != nil || n != 20 {
		t.Errorf("jobs after: %d, %v; want 20", n, err)
	}
	if err := db.AppendAudit(&store.AuditEntry{Action: store.AuditRead}); err != nil {
		t.Fatal(err)
	}
	es, err := db.ListAudit(store.AuditQuery{Limit: 10})
	if err != nil || len(es) != 3 || es[2].Seq != 3 || !bytes.Equal(es[2].Prev, es[1].Hash) {
		t.Errorf("audit after: %v %+v", err, es)
	}
}
