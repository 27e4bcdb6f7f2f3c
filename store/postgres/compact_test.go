package postgres_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/earshot-dev/earshot/store"
)

// TestCompact: a job rewritten and one deleted leave their old rows in
// the table's files; Compact rewrites the content tables, so after a
// checkpoint no file under the server's base directory holds them, and
// the jobs left read back. Before (until 2026-11-30) nothing took what a
// sealed rewrite left out of the database's files.
func TestCompact(t *testing.T) {
	dsn := pg.NewDatabase(t)
	db := openNode(t, dsn, "n1")
	for _, id := range []string{"kept", "gone"} {
		j := job(id, "acme", store.KindPreRecorded, store.StatusDone, time.Now())
		j.Result = json.RawMessage(`{"words":"ZEBRAQUOKKA said in ` + id + `"}`)
		if err := db.CreateJob(j); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.UpdateJob("kept", func(j *store.Job) ([]*store.Delivery, error) {
		j.Result = json.RawMessage(`{"words":"sealed now"}`)
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteJob("gone"); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	var oid uint32 // this database's directory under base/
	if err := conn.QueryRow(t.Context(), "SELECT oid FROM pg_database WHERE datname = current_database()").Scan(&oid); err != nil {
		t.Fatal(err)
	}
	checkpoint := func() {
		t.Helper()
		if _, err := conn.Exec(t.Context(), "CHECKPOINT"); err != nil {
			t.Fatal(err)
		}
	}
	holding := func() []string {
		var out []string
		filepath.Walk(filepath.Join(pg.DataDir(), "base", strconv.FormatUint(uint64(oid), 10)), func(p string, fi os.FileInfo, err error) error {
			if err == nil && fi.Mode().IsRegular() {
				if b, _ := os.ReadFile(p); bytes.Contains(b, []byte("ZEBRAQUOKKA")) {
					out = append(out, p)
				}
			}
			return nil
		})
		return out
	}
	checkpoint()
	if len(holding()) == 0 {
		t.Fatal("no table file holds the old rows before: the test shows nothing")
	}
	if err := db.Compact(t.Context()); err != nil {
		t.Fatal(err)
	}
	checkpoint()
	if files := holding(); len(files) > 0 {
		t.Errorf("after Compact the old rows are still in %v", files)
	}
	if j, err := db.Job("kept"); err != nil || string(j.Result) != `{"words":"sealed now"}` {
		t.Errorf("job kept after: %v %+v", err, j)
	}
}
