package daemon

import (
	"context"
	"fmt"

	"github.com/earshot-dev/earshot/daemon/live"
	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/ingest"
	"github.com/earshot-dev/earshot/store"
)

// newLive builds the live sessions (package live) on the daemon's store,
// pipeline and blob files.
func newLive(d *Daemon) *live.Service {
	return live.New(d.cfg.Live, live.Deps{
		Store: d.db, Recordings: liveDeps{d}, Signals: liveDeps{d}, Pipeline: d.pl,
		Decoders: d.cfg.Sphinx.Decoders, CPU: d.pl.CPU(),
		Log:     d.log,
		Cluster: newClusterLive(d), NodeID: d.cfg.Cluster.NodeID, RecordingSync: d.cfg.Cluster.RecordingSync,
	})
}

// CreateLive creates a live session for POST /v2/live (live.Service): in a
// cluster, on a node with room, whose base URL it names.
func (d *Daemon) CreateLive(ctx context.Context, account, keyID, requestID string, body []byte, region string) (ingest.LiveCreated, error) {
	d.checkTenants(false)
	return d.live.CreateLive(ctx, account, keyID, requestID, body, region)
}

// AttachLive attaches the WebSocket door to the session a token names.
func (d *Daemon) AttachLive(ctx context.Context, token, from string, l ingest.Listener) (ingest.Session, error) {
	return d.live.AttachLive(ctx, token, from, l)
}

// AttachAudio attaches the WHIP door to the session a token names.
func (d *Daemon) AttachAudio(ctx context.Context, token, from string) (ingest.Session, error) {
	return d.live.AttachAudio(ctx, token, from)
}

// CheckSessionToken checks a session token for the WHIP door before it
// builds a PeerConnection, without attaching (live.Service.CheckToken).
func (d *Daemon) CheckSessionToken(token string) error {
	return d.live.CheckToken(token)
}

// OpenLive opens a live session for a SIP call.
func (d *Daemon) OpenLive(ctx context.Context, req ingest.LiveRequest) (ingest.Session, error) {
	return d.live.OpenLive(ctx, req)
}

// liveDeps is what the live sessions use of the daemon: its blob files,
// its wake-ups and metrics, its storage quota.
type liveDeps struct{ d *Daemon }

func (l liveDeps) RecordingPath(name string) (string, error) { return l.d.recordingPath(name) }
func (l liveDeps) CommitRecording(path string) error         { return l.d.commitRecording(path) }
func (l liveDeps) DropRecording(path string) error           { return l.d.dropRecording(path) }
func (l liveDeps) CreateRecording(path string) (live.RecordingFile, error) {
	return l.d.createRecording(path)
}
func (l liveDeps) OpenRecording(path string) (live.RecordingFile, error) {
	return l.d.openRecording(path)
}
func (l liveDeps) BlobFile(name string) (string, func(), error) {
	return l.d.blobFile(name)
}
func (l liveDeps) StoreBlobFile(name, path string) error { return l.d.storeBlobFile(name, path) }

func (l liveDeps) Queued(batchPass, deliveries bool) {
	if batchPass {
		signal(l.d.batchWake)
	}
	if deliveries {
		l.d.outbox.Wake()
	}
}

func (l liveDeps) Audit(e store.AuditEntry) { l.d.Audit(e) }

func (l liveDeps) Finished(status store.Status) {
	l.d.metrics.jobsFinished.WithLabelValues(string(store.KindLive), string(status)).Inc()
}

func (l liveDeps) AdmitRecording(account string) error {
	if err := l.d.quota.Admit(account); err != nil {
		// Also ingest.ErrAtCapacity, for a door with no 507 of its own (SIP: 503).
		return newError(errcode.ErrQuota, fmt.Errorf("%w: %w", ingest.ErrAtCapacity, err), reasonQuota, l.d.quota.Limit())
	}
	return nil
}
