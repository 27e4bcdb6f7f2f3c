package daemon

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/earshot-dev/earshot/errcode"
)

// The crash report: the Go runtime writes the report of a fatal error (a
// crash in C code, an unrecovered panic) to crashFile as well as to
// stderr (debug.SetCrashOutput). A kill or a power loss writes nothing, so
// at the next start a non-empty report says the last run died of its own
// fault; it is kept as crashPrevFile for the operator.
const (
	crashFile     = "crash.log"
	crashPrevFile = "crash.prev.log"
	// crashExcerpt bounds how much of a report goes to the log.
	crashExcerpt = 2048
)

// errPoisonJob ends a job that was processing when the daemon crashed: it
// may be what crashed it, and running it again could take the service
// down again with every tenant's live calls.
// Its client message is shown although it is a 500.
var errPoisonJob = errcode.ErrInternal.Sub("daemon: processing stopped when the service crashed; the job is not retried",
	"the service stopped while processing this job; it is not retried")

// armCrashReport reads the report the last run left (crashed is true when
// there was one), keeps it as crashPrevFile, and directs this run's
// fatal-error report to a fresh crashFile.
func (d *Daemon) armCrashReport() (crashed bool, err error) {
	path := filepath.Join(d.cfg.DataDir, crashFile)
	if f, err := os.Open(path); err == nil {
		head, _ := io.ReadAll(io.LimitReader(f, crashExcerpt))
		f.Close()
		if len(head) > 0 {
			crashed = true
			prev := filepath.Join(d.cfg.DataDir, crashPrevFile)
			if err := os.Rename(path, prev); err != nil {
				return crashed, fmt.Errorf("keep crash report: %w", err)
			}
			d.log.Error("the last run crashed; jobs it was processing are not retried",
				"report", prev, "excerpt", string(head))
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("read crash report: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return crashed, fmt.Errorf("open crash report: %w", err)
	}
	defer f.Close() // SetCrashOutput keeps its own descriptor
	if err := debug.SetCrashOutput(f, debug.CrashOptions{}); err != nil {
		return crashed, fmt.Errorf("set crash report: %w", err)
	}
	return crashed, nil
}

// failSuspects ends the jobs a crashed run left processing (see
// store.RecoverOptions.Crashed) with errPoisonJob.
func (d *Daemon) failSuspects(ids []string) {
	log := d.log.With("component", "recover")
	for _, id := range ids {
		j, err := d.db.Job(id)
		if err != nil {
			log.Error("load suspect job", "job_id", id, "error", err)
			continue
		}
		log.Warn("job was processing when the service crashed; not retried", "job_id", id,
			"attempts", j.Attempts, "created_at", j.CreatedAt.Format(time.RFC3339))
		d.failJob(log.With("job_id", id), j, errPoisonJob)
	}
}
