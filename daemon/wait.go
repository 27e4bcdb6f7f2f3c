package daemon

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/earshot-dev/earshot/store"
)

// jobEnds tells waiters that a pre-recorded job ended on this node (done,
// error, or deleted): the channel wait returns is closed at the next end,
// and a fresh one takes its place. Waiters re-read their job on each end,
// so one broadcast serves any number of them.
type jobEnds struct {
	mu sync.Mutex
	ch chan struct{} // guarded by mu: closed by the next end
}

// wait returns the channel the next end closes.
func (e *jobEnds) wait() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ch == nil {
		e.ch = make(chan struct{})
	}
	return e.ch
}

// ended wakes every waiter.
func (e *jobEnds) ended() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ch != nil {
		close(e.ch)
		e.ch = nil
	}
}

// waitPoll is how often WaitJob reads the store without a signal: a job
// another node of a cluster ran ends there, unseen by this node's jobEnds.
const waitPoll = time.Second

// WaitJob waits until account's pre-recorded job id has ended (status done
// or error) and returns it as stored. It returns ctx's error when ctx ends
// first, and the errors of Job (404 once the job is deleted, 401 for
// another account's). An end on this node wakes it at once; one on another
// node of a cluster within waitPoll.
func (d *Daemon) WaitJob(ctx context.Context, account, id string) (*store.Job, error) {
	for {
		next := d.ends.wait() // before the read: an end between the two is not missed
		j, err := d.Job(ctx, account, store.KindPreRecorded, id)
		if err != nil {
			return nil, err
		}
		if j.Status == store.StatusDone || j.Status == store.StatusError {
			return j, nil
		}
		t := time.NewTimer(waitPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("wait for job %s: %w", id, context.Cause(ctx))
		case <-next:
		case <-t.C:
		}
		t.Stop()
	}
}
