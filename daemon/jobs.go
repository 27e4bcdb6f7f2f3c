package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/ingest"
	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/store"
)

// CreatePreRecorded validates a POST /v2/pre-recorded body and commits a
// queued job. The returned job is on disk.
func (d *Daemon) CreatePreRecorded(ctx context.Context, account, requestID string, body []byte) (*store.Job, error) {
	caps := d.caps
	caps.LocalFile = func(id string) bool {
		up, err := d.db.Upload(id)
		return err == nil && up.Account == account
	}
	p, err := params.DecodePreRecorded(body, caps)
	if err != nil {
		return nil, err
	}
	if _, err := d.pl.Engines.Route(p.Model, p.LanguageConfig.Languages, p.LanguageConfig.CodeSwitching); err != nil {
		return nil, err
	}
	n, err := d.db.CountJobs(store.KindPreRecorded, store.StatusQueued)
	if err != nil {
		return nil, err
	}
	if n >= d.cfg.Limits.MaxQueued {
		return nil, newError(ingest.ErrAtCapacity, nil, "%d pre-recorded jobs queued, limit %d", n, d.cfg.Limits.MaxQueued)
	}
	id := uuid.NewString()
	job := &store.Job{
		ID: id, Account: account, Kind: store.KindPreRecorded, Status: store.StatusQueued,
		RequestID: requestID, CreatedAt: time.Now().UTC(), CustomMetadata: p.CustomMetadata,
		PostSessionMetadata: map[string]any{},
	}
	if fileID, ok := params.FileID(p.AudioURL); ok {
		up, err := d.db.Upload(fileID)
		if err != nil || up.Account != account {
			return nil, newError(params.ErrCannotServe, nil, "audio_url: no uploaded file with id %s", fileID)
		}
		job.Blob = jobBlob(id)
		if err := d.db.LinkBlob(up.Blob, job.Blob); err != nil {
			return nil, fmt.Errorf("link upload %s: %w", fileID, err)
		}
		dur, ch := up.AudioDuration, up.Channels
		job.File = &store.File{ID: up.ID, Filename: &up.Filename, Source: &p.AudioURL, AudioDuration: &dur, Channels: &ch}
	} else {
		src := p.AudioURL
		job.File = &store.File{ID: uuid.NewString(), Source: &src}
		job.AwaitingAudio = true // the fetcher downloads it, then queues it
	}
	if job.Params, err = json.Marshal(p); err != nil {
		return nil, fmt.Errorf("encode params: %w", err)
	}
	if err := d.db.CreateJob(job); err != nil {
		if job.Blob != "" {
			d.db.RemoveBlob(job.Blob)
		}
		return nil, err
	}
	d.log.Info("job accepted", "job_id", id, "account_id", account, "kind", job.Kind)
	if job.AwaitingAudio {
		d.fetcher.Add(account, id)
	}
	signal(d.wake)
	return job, nil
}

// Job reads a job of the given kind owned by account.
func (d *Daemon) Job(ctx context.Context, account string, kind store.Kind, id string) (*store.Job, error) {
	if !params.ValidID(id) {
		return nil, fmt.Errorf("job %q: %w", id, store.ErrNotFound)
	}
	j, err := d.db.Job(id)
	if err != nil {
		return nil, err
	}
	if j.Kind != kind && kind != "" {
		return nil, fmt.Errorf("job %s: %w", id, store.ErrNotFound)
	}
	if j.Account != account {
		return nil, fmt.Errorf("job %s: %w", id, errcode.ErrNotOwner)
	}
	return j, nil
}

// ListJobs lists jobs newest first; q.Account and q.Kind must be set.
func (d *Daemon) ListJobs(ctx context.Context, q store.ListQuery) ([]*store.Job, error) {
	return d.db.ListJobs(q)
}

// EachJob visits the jobs ListJobs would return, one at a time, until fn
// returns false (bolt.DB.EachJob: fn runs inside a read transaction).
func (d *Daemon) EachJob(ctx context.Context, q store.ListQuery, fn func(*store.Job) bool) error {
	return d.db.EachJob(q, fn)
}

// DeleteJob deletes a job with its audio and result, stopping its worker if
// it is running. kind "" accepts either kind (the deprecated alias).
func (d *Daemon) DeleteJob(ctx context.Context, account string, kind store.Kind, id string) error {
	if _, err := d.Job(ctx, account, kind, id); err != nil {
		return err
	}
	d.live.End(id) // a running session ends first (its client gets end_session)
	if err := d.db.DeleteJob(id); err != nil {
		return err
	}
	d.quota.Forget(account)
	d.mu.Lock()
	if r, ok := d.running[id]; ok {
		r.cancel()
	}
	d.mu.Unlock()
	d.ends.ended()
	d.log.Info("job deleted", "job_id", id, "account_id", account)
	return nil
}

// Upload stores an uploaded audio file, checking that it is audio within
// the bounds a job decodes under (413 over one, 422 not audio); a refused
// file is removed and its bytes released from the account's quota.
func (d *Daemon) Upload(ctx context.Context, account, filename string, r io.Reader) (*store.Upload, error) {
	id := uuid.NewString()
	blob := "upload-" + id
	qr := d.quota.Reader(account, r)
	size, err := d.db.WriteBlob(blob, qr, d.cfg.Limits.MaxUploadBytes)
	qr.Settle(err)
	switch {
	case errors.Is(err, errcode.ErrQuota):
		return nil, newError(errcode.ErrQuota, err, reasonQuota, d.quota.Limit())
	case errors.Is(err, store.ErrTooLarge):
		return nil, newError(errcode.ErrTooLarge, nil, "audio: upload exceeds %d bytes", d.cfg.Limits.MaxUploadBytes)
	case err != nil:
		return nil, err
	}
	// Audio over a bound (channels, duration, decoded bytes) is refused
	// now, not kept and charged to fail when a job decodes it.
	info, err := d.probeBlob(ctx, blob, size)
	if err != nil {
		d.db.RemoveBlob(blob)
		d.quota.Forget(account)
		return nil, err
	}
	name := filepath.Base(filename)
	if name == "." || name == "/" {
		name = ""
	}
	ext := strings.TrimPrefix(strings.ToLower(filepath.Ext(name)), ".")
	if ext == "" {
		ext = info.Format
	}
	up := &store.Upload{
		ID: id, Account: account, Filename: name, Extension: ext, Size: size,
		AudioDuration: info.Duration, Channels: info.Channels, CreatedAt: time.Now().UTC(), Blob: blob,
	}
	if err := d.db.PutUpload(up); err != nil {
		d.db.RemoveBlob(blob)
		return nil, err
	}
	return up, nil
}

// probeBlob probes the blob name of size clear bytes (pipeline's
// ProbeFile). A blob with no local file (a sealed or shared store) that is
// a WAV is probed from its stream, which reads its header only (a sealed
// blob's first chunk decrypted, not the whole blob copied into a memory
// file); other formats go through blobFile, for ffprobe.
func (d *Daemon) probeBlob(ctx context.Context, name string, size int64) (media.Info, error) {
	if _, ok := d.db.LocalBlobPath(name); !ok {
		r, err := d.db.OpenBlob(name)
		if err != nil {
			return media.Info{}, err
		}
		info, isWAV, err := d.pl.ProbeWAV(r, size)
		r.Close()
		if isWAV || err != nil {
			return info, err
		}
	}
	path, release, err := d.blobFile(name)
	if err != nil {
		return media.Info{}, err
	}
	defer release()
	return d.pl.ProbeFile(ctx, path)
}

// OpenUpload opens an uploaded file owned by account.
func (d *Daemon) OpenUpload(ctx context.Context, account, id string) (store.BlobReader, *store.Upload, error) {
	if !params.ValidID(id) {
		return nil, nil, fmt.Errorf("file %q: %w", id, store.ErrNotFound)
	}
	up, err := d.db.Upload(id)
	if err != nil {
		return nil, nil, err
	}
	if up.Account != account {
		return nil, nil, fmt.Errorf("file %s: %w", id, errcode.ErrNotOwner)
	}
	f, err := d.db.OpenBlob(up.Blob)
	return f, up, err
}

// DeleteUpload deletes an uploaded file owned by account: its record, then
// its bytes. Jobs already made from it keep their own link to the audio; a
// later job naming it gets the 422 of an unknown file.
func (d *Daemon) DeleteUpload(ctx context.Context, account, id string) error {
	if err := d.removeUpload(account, id); err != nil {
		return err
	}
	d.quota.Forget(account)
	d.log.Info("file deleted", "file_id", id, "account_id", account)
	return nil
}

// DropUpload deletes an uploaded file a job was just made from (the /v1
// door's file): as DeleteUpload, but the account's storage count is kept,
// since the job links the same bytes (store.AccountBytes counts them
// once), so the next upload is not charged a recount of the account.
func (d *Daemon) DropUpload(ctx context.Context, account, id string) error {
	return d.removeUpload(account, id)
}

// removeUpload deletes account's upload id: its record, then its bytes.
func (d *Daemon) removeUpload(account, id string) error {
	if !params.ValidID(id) {
		return fmt.Errorf("file %q: %w", id, store.ErrNotFound)
	}
	up, err := d.db.Upload(id)
	if err != nil {
		return err
	}
	if up.Account != account {
		return fmt.Errorf("file %s: %w", id, errcode.ErrNotOwner)
	}
	// Record first: a crash between the two leaves a file no record names,
	// which the next start removes.
	if err := d.db.DeleteUpload(id); err != nil {
		return err
	}
	return d.db.RemoveBlob(up.Blob)
}

// OpenJobAudio opens a job's audio file and returns its content type.
func (d *Daemon) OpenJobAudio(ctx context.Context, account string, kind store.Kind, id string) (store.BlobReader, string, error) {
	j, err := d.Job(ctx, account, kind, id)
	if err != nil {
		return nil, "", err
	}
	if j.Blob == "" {
		return nil, "", fmt.Errorf("job %s has no audio yet: %w", id, store.ErrNotFound)
	}
	f, err := d.db.OpenBlob(j.Blob)
	if err != nil {
		return nil, "", err
	}
	ctype := ""
	if j.Kind == store.KindLive || hasRedactedAudio(j) {
		ctype = "audio/wav"
	} else if j.File != nil && j.File.Filename != nil {
		ctype = mime.TypeByExtension(strings.ToLower(filepath.Ext(*j.File.Filename)))
	}
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	return f, ctype, nil
}
