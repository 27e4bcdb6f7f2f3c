package bolt_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/store/bolt"

	"github.com/earshot-dev/earshot/store"
)

func TestRecoverAfterClose(t *testing.T) {
	dir := t.TempDir()
	db, err := bolt.Open(dir, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	mustCreate(t, db,
		newJob("p1", "a", store.KindPreRecorded, store.StatusQueued, at(1)),
		newJob("p2", "a", store.KindPreRecorded, store.StatusQueued, at(2)),
		newJob("p3", "a", store.KindPreRecorded, store.StatusQueued, at(3)),
		newJob("l-proc", "a", store.KindLive, store.StatusProcessing, at(5)),
		newJob("l-queued", "a", store.KindLive, store.StatusQueued, at(4)),
		newJob("l-done", "a", store.KindLive, store.StatusDone, at(0)),
	)
	// Two workers claim p1 and p2; p1 finishes, p2 is cut off.
	for range 2 {
		if _, err := db.ClaimNext(store.KindPreRecorded); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.UpdateJob("p1", setStatus(store.StatusDone)); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = bolt.Open(dir, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rep, err := db.Recover(store.RecoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.Requeued, []string{"p2"}) || !slices.Equal(rep.Live, []string{"l-queued", "l-proc"}) {
		t.Errorf("Recover = %+v", rep)
	}
	if err := db.Check(); err != nil {
		t.Fatal(err)
	}
	// p2 keeps its place ahead of p3.
	for _, want := range []struct {
		id       string
		attempts int
	}{{"p2", 2}, {"p3", 1}} {
		j, err := db.ClaimNext(store.KindPreRecorded)
		if err != nil || j.ID != want.id || j.Attempts != want.attempts {
			t.Fatalf("ClaimNext = %+v, %v; want %s with %d attempts", j, err, want.id, want.attempts)
		}
	}
	// A second Recover with nothing left processing reports only live jobs.
	db.UpdateJob("p2", setStatus(store.StatusDone))
	db.UpdateJob("p3", setStatus(store.StatusError))
	if rep, err := db.Recover(store.RecoverOptions{}); err != nil || len(rep.Requeued) != 0 || len(rep.Live) != 2 {
		t.Errorf("second Recover = %+v, %v", rep, err)
	}
}

const crashDirEnv = "EARSHOT_STORE_CRASH_DIR"

// TestCrashRecovery runs a child process that commits jobs and claims, then
// is killed with SIGKILL while holding the database; the parent reopens the
// file, checks it and recovers.
func TestCrashRecovery(t *testing.T) {
	if dir := os.Getenv(crashDirEnv); dir != "" {
		crashChild(dir)
		return
	}
	if testing.Short() {
		t.Skip("starts a child process")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashRecovery$")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "ready\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child said %q, %v", line, err)
	}
	// While the child holds it, the database is locked.
	if _, err := bolt.Open(dir, &bolt.Options{Timeout: 100 * time.Millisecond}); !errors.Is(err, store.ErrLocked) {
		t.Errorf("Open while child runs: %v, want ErrLocked", err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	db, err := bolt.Open(dir, nil)
	if err != nil {
		t.Fatalf("reopen after SIGKILL: %v", err)
	}
	defer db.Close()
	if err := db.Check(); err != nil {
		t.Fatalf("Check after SIGKILL: %v", err)
	}
	rep, err := db.Recover(store.RecoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.Requeued, []string{"job-0", "job-1"}) || !slices.Equal(rep.Live, []string{"live-0"}) {
		t.Errorf("Recover = %+v", rep)
	}
	var order []string
	for {
		j, err := db.ClaimNext(store.KindPreRecorded)
		if errors.Is(err, store.ErrEmpty) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		order = append(order, j.ID)
	}
	if want := []string{"job-0", "job-1", "job-2", "job-3", "job-4"}; !slices.Equal(order, want) {
		t.Errorf("after recovery claims %v, want %v", order, want)
	}
	if n, _ := db.PendingDeliveries(); n != 1 {
		t.Errorf("PendingDeliveries = %d, want 1", n)
	}
	if err := db.Check(); err != nil {
		t.Error(err)
	}
}

// crashChild commits work with fsync on, says ready, and waits to be killed.
func crashChild(dir string) {
	db, err := bolt.Open(dir, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	for i := range 5 {
		if err := db.CreateJob(newJob(fmt.Sprintf("job-%d", i), "a", store.KindPreRecorded, store.StatusQueued,
			t0.Add(time.Duration(i)*time.Second))); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	for range 2 {
		if _, err := db.ClaimNext(store.KindPreRecorded); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	if err := db.CreateJob(newJob("live-0", "a", store.KindLive, store.StatusProcessing, t0)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := db.EnqueueDelivery(&store.Delivery{JobID: "job-4", URL: "http://x/"}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin) // until killed
	os.Exit(3)
}
