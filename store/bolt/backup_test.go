package bolt_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/store/bolt"

	"go.etcd.io/bbolt"

	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/storetest"
)

func writerJob(i int) *store.Job {
	j := newJob(fmt.Sprintf("w-%06d", i), "acme", store.KindPreRecorded, store.StatusDone, t0.Add(time.Duration(i)*time.Second))
	j.Result = json.RawMessage(`{"text":"` + strings.Repeat("x", 700) + `"}`)
	return j
}

// gatedWriter holds the first Write until release is closed (or a bound
// passes), so the backup's read transaction is open while writes commit.
type gatedWriter struct {
	w       io.Writer
	started chan struct{} // closed at the first Write
	release <-chan struct{}
	once    sync.Once
	timeout bool
}

func (g *gatedWriter) Write(p []byte) (int, error) {
	g.once.Do(func() {
		close(g.started)
		t := time.NewTimer(10 * time.Second)
		defer t.Stop()
		select {
		case <-g.release:
		case <-t.C:
			// A commit that must grow the memory map waits for the read
			// transaction; then the overlap cannot be forced.
			g.timeout = true
		}
	})
	return g.w.Write(p)
}

// TestBackupWhileWriting backs up while a goroutine commits jobs: the copy
// opens, passes Check, holds every job committed before the backup began
// and none committed after its transaction started.
func TestBackupWhileWriting(t *testing.T) {
	db := storetest.Open(t)
	const prefill = 1500
	for i := range prefill {
		mustCreate(t, db, writerJob(i))
	}
	// Free pages for the writes during the backup: while a read
	// transaction is open, a commit that must grow the file's memory map
	// waits for it, so the overlap could not be forced.
	for i := range 2000 {
		j := writerJob(i)
		j.ID = fmt.Sprintf("filler-%d", i)
		mustCreate(t, db, j)
	}
	for i := range 2000 {
		if err := db.DeleteJob(fmt.Sprintf("filler-%d", i)); err != nil {
			t.Fatal(err)
		}
	}

	var committed atomic.Int64 // jobs w-0 .. w-(committed-1) are on disk
	committed.Store(prefill)
	progress := make(chan struct{}, 1)
	stop := make(chan struct{})
	writerErr := make(chan error, 1)
	go func() {
		for i := prefill; ; i++ {
			select {
			case <-stop:
				writerErr <- nil
				return
			default:
			}
			if err := db.CreateJob(writerJob(i)); err != nil {
				writerErr <- err
				return
			}
			committed.Add(1)
			select {
			case progress <- struct{}{}:
			default:
			}
		}
	}()
	waitCommitted := func(n int64) {
		for committed.Load() < n {
			select {
			case <-progress:
			case <-stop:
				return
			}
		}
	}
	waitCommitted(prefill + 20)

	before := committed.Load()
	release := make(chan struct{})
	out, err := os.Create(filepath.Join(t.TempDir(), "backup.db"))
	if err != nil {
		t.Fatal(err)
	}
	gw := &gatedWriter{w: out, started: make(chan struct{}), release: release}
	var atFirstWrite, during int64
	go func() {
		<-gw.started
		atFirstWrite = committed.Load()
		waitCommitted(atFirstWrite + 30)
		during = committed.Load() - atFirstWrite
		close(release)
	}()
	n, err := db.Backup(gw)
	if err != nil {
		t.Fatal(err)
	}
	close(stop)
	if err := <-writerErr; err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	total := committed.Load()
	if gw.timeout {
		t.Logf("writes could not overlap the backup (memory map growth)")
	} else {
		t.Logf("backup %d bytes; %d jobs committed while it ran", n, during)
	}

	dir := t.TempDir()
	if err := os.Rename(out.Name(), filepath.Join(dir, "earshot.db")); err != nil {
		t.Fatal(err)
	}
	cp, err := bolt.Open(dir, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatalf("open backup: %v", err)
	}
	defer cp.Close()
	if err := cp.Check(); err != nil {
		t.Fatalf("backup inconsistent: %v", err)
	}
	got, err := cp.CountJobs(store.KindPreRecorded, store.StatusDone)
	if err != nil {
		t.Fatal(err)
	}
	if int64(got) < before || int64(got) > total {
		t.Fatalf("backup holds %d jobs; want between %d (committed before) and %d (all)", got, before, total)
	}
	// The read transaction began before the first Write: jobs committed
	// after that are not in the copy.
	if !gw.timeout && int64(got) > atFirstWrite {
		t.Errorf("backup holds %d jobs, but only %d were committed when it began writing", got, atFirstWrite)
	}
	// The jobs are exactly w-0 .. w-(got-1): a prefix, no holes.
	for i := range got {
		if _, err := cp.Job(fmt.Sprintf("w-%06d", i)); err != nil {
			t.Fatalf("job %d of %d missing from backup: %v", i, got, err)
		}
	}
}

func TestBackupFile(t *testing.T) {
	db := storetest.Open(t)
	mustCreate(t, db, writerJob(1))
	dir := t.TempDir()
	path := filepath.Join(dir, "copy.db")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	n, err := db.BackupFile(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() != n || st.Mode().Perm() != 0o600 {
		t.Errorf("backup file: size %d mode %v; want %d bytes, 0600", st.Size(), st.Mode().Perm(), n)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("backup dir holds %d entries, want only the backup", len(entries))
	}
	if _, err := db.BackupFile(filepath.Join(dir, "missing", "x.db")); err == nil {
		t.Error("BackupFile into a missing directory succeeded")
	}
}

// makeBackup returns a backup file of a store holding the given jobs.
func makeBackup(t *testing.T, jobs ...*store.Job) string {
	t.Helper()
	db := storetest.Open(t)
	mustCreate(t, db, jobs...)
	path := filepath.Join(t.TempDir(), "backup.db")
	if _, err := db.BackupFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// boltFile writes a bbolt file whose meta bucket says schema version v
// (no meta bucket when v < 0) and which has no other bucket.
func boltFile(t *testing.T, v int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "other.db")
	b, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = b.Update(func(tx *bbolt.Tx) error {
		if v < 0 {
			_, err := tx.CreateBucket([]byte("something"))
			return err
		}
		m, err := tx.CreateBucket([]byte("meta"))
		if err != nil {
			return err
		}
		return m.Put([]byte("schema_version"), []byte{0, 0, 0, 0, 0, 0, 0, byte(v)})
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRestore(t *testing.T) {
	backup := makeBackup(t, writerJob(1), writerJob(2))
	garbage := filepath.Join(t.TempDir(), "garbage.db")
	if err := os.WriteFile(garbage, []byte(strings.Repeat("not a database ", 1000)), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(t.TempDir(), "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(t.TempDir(), "truncated.db")
	b, err := os.ReadFile(backup)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(truncated, b[:len(b)/2], 0o600); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name    string
		src     string
		fresh   bool // restore into an empty directory
		hold    bool // keep the current store open (a running daemon)
		wantErr error
	}{
		{name: "ok", src: backup},
		{name: "into empty dir", src: backup, fresh: true},
		{name: "daemon running", src: backup, hold: true, wantErr: store.ErrLocked},
		{name: "garbage", src: garbage, wantErr: store.ErrCorrupt},
		{name: "empty file", src: empty, wantErr: store.ErrCorrupt},
		{name: "truncated", src: truncated, wantErr: store.ErrCorrupt},
		{name: "foreign bbolt file", src: boltFile(t, -1), wantErr: store.ErrCorrupt},
		{name: "missing buckets", src: boltFile(t, 1), wantErr: store.ErrCorrupt},
		{name: "schema too new", src: boltFile(t, 99), wantErr: store.ErrSchemaTooNew},
		{name: "missing file", src: filepath.Join(t.TempDir(), "nope.db"), wantErr: fs.ErrNotExist},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if !tc.fresh {
				db, err := bolt.Open(dir, &bolt.Options{NoSync: true})
				if err != nil {
					t.Fatal(err)
				}
				mustCreate(t, db, writerJob(3))
				if tc.hold {
					defer db.Close()
				} else if err := db.Close(); err != nil {
					t.Fatal(err)
				}
			}
			err := bolt.Restore(dir, tc.src)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Restore = %v, want %v", err, tc.wantErr)
				}
				entries, _ := os.ReadDir(dir)
				for _, e := range entries {
					if e.Name() != "earshot.db" && e.Name() != "blobs" {
						t.Errorf("failed restore left %s", e.Name())
					}
				}
				if !tc.fresh && !tc.hold {
					assertJobs(t, dir, "w-000003")
				}
				return
			}
			if err != nil {
				t.Fatalf("Restore: %v", err)
			}
			assertJobs(t, dir, "w-000001", "w-000002")
			bak := filepath.Join(dir, "earshot.db"+bolt.RestoreBackupSuffix)
			if tc.fresh {
				if _, err := os.Stat(bak); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("restore into an empty dir kept %s (%v)", bak, err)
				}
				return
			}
			// The old database is kept, and opens.
			old := t.TempDir()
			if err := os.Rename(bak, filepath.Join(old, "earshot.db")); err != nil {
				t.Fatal(err)
			}
			assertJobs(t, old, "w-000003")
		})
	}
}

// assertJobs opens the store in dir and checks it holds exactly the jobs ids.
func assertJobs(t *testing.T, dir string, ids ...string) {
	t.Helper()
	db, err := bolt.Open(dir, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	defer db.Close()
	if err := db.Check(); err != nil {
		t.Fatal(err)
	}
	n, err := db.CountJobs(store.KindPreRecorded, "")
	if err != nil {
		t.Fatal(err)
	}
	if n != len(ids) {
		t.Errorf("%s holds %d jobs, want %d", dir, n, len(ids))
	}
	for _, id := range ids {
		if _, err := db.Job(id); err != nil {
			t.Errorf("%s: %v", dir, err)
		}
	}
}

// TestRestoreOwner: root restoring into a data dir owned by the daemon's
// user leaves a database that user owns.
func TestRestoreOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown")
	}
	backup := makeBackup(t, writerJob(1))
	dir := t.TempDir()
	const uid, gid = 65534, 65534 // nobody, nogroup
	if err := os.Chown(dir, uid, gid); err != nil {
		t.Fatal(err)
	}
	if err := bolt.Restore(dir, backup); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, "earshot.db"))
	if err != nil {
		t.Fatal(err)
	}
	if sys := st.Sys().(*syscall.Stat_t); sys.Uid != uid || sys.Gid != gid {
		t.Errorf("restored earshot.db owned by %d:%d, want %d:%d", sys.Uid, sys.Gid, uid, gid)
	}
}
