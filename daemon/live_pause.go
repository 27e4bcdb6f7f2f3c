package daemon

import (
	"context"
	"errors"
	"fmt"

	"github.com/earshot-dev/earshot/daemon/live"
	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/ingest"
	"github.com/earshot-dev/earshot/store"
)

// PauseLive pauses (pause true) or resumes the live session id of account
// (POST /v2/live/{id}/pause, /resume): idempotent. Another account's
// session is not found (404), as an unknown id is: pausing is no way to
// learn that a session exists. An ended session is a conflict (409).
func (d *Daemon) PauseLive(ctx context.Context, account, id string, pause bool) (ingest.PauseState, error) {
	j, err := d.Job(ctx, account, store.KindLive, id)
	if errors.Is(err, errcode.ErrNotOwner) {
		err = fmt.Errorf("job %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return ingest.PauseState{}, err
	}
	if j.Status == store.StatusDone || j.Status == store.StatusError {
		return ingest.PauseState{}, &errcode.Error{Kind: live.ErrNotRunning, Msg: fmt.Sprintf("live session %s has ended", id)}
	}
	return d.live.Pause(ctx, id, pause)
}
