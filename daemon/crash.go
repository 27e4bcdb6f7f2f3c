package daemon

import (
	"time"

	"github.com/earshot-dev/earshot/errcode"
)

// errPoisonJob ends a job that was processing when the daemon crashed (the
// crash report of package crash said so): it may be what crashed it, and
// running it again could take the service down again with every tenant's
// live calls. Its client message is shown although it is a 500.
var errPoisonJob = errcode.ErrInternal.Sub("daemon: processing stopped when the service crashed; the job is not retried",
	"the service stopped while processing this job; it is not retried")

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
