package daemon

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/recognizer/pipeline"
	"github.com/earshot-dev/earshot/store"
)

// A pre-recorded job with pii_redaction (pii_redaction_config.audio
// silence or tone) keeps no original audio: its worker writes the decoded
// audio, with every redacted entity's span blanked, as a new blob
// (redactedBlob: a 16-bit PCM WAV at 16 kHz, whatever the upload's
// container) before it stores the job done, and the commit that stores
// the result also points the job at the new blob. Only then is the
// original blob removed. A crash before that commit leaves the job
// processing on its original audio (it runs again; the new blob, named by
// no record, is swept at the next start, store.SweepBlobs); a crash after
// it leaves the original named by no record, swept the same way. At no
// point is a job done whose record names the original audio.

// redactedInfix names a job's redacted audio blob after its own.
const redactedInfix = "-redacted-"

// redactedBlob names the redacted audio of job id written by the run of
// claim attempt: each run its own, so a run whose claim was lost (a
// stalled node) never removes or replaces the audio of the run that holds
// the job now.
func redactedBlob(id string, attempt int) string {
	return jobBlob(id) + redactedInfix + strconv.Itoa(attempt)
}

// hasRedactedAudio reports whether j's blob is redacted audio (a WAV).
func hasRedactedAudio(j *store.Job) bool {
	return strings.HasPrefix(j.Blob, jobBlob(j.ID)+redactedInfix)
}

// storeRedactedAudio writes ra, the redacted audio of job, as the blob
// redactedBlob names and returns that name: the decoded channels as a
// WAV in a scratch file (scratchFile: under data_dir, or in memory when
// the store seals), blanked over ra.Spans in place (media.Blank), then
// stored as every blob is (store.WriteBlob: durable once it returns). The
// scratch file is removed on every path. Its size is
// the decoded audio's, which limits.max_decoded_bytes bounds.
func (d *Daemon) storeRedactedAudio(job *store.Job, ra *pipeline.RedactedAudio) (string, error) {
	f, _, release, err := d.scratchFile("redact.wav")
	if err != nil {
		return "", fmt.Errorf("redacted audio: %w", err)
	}
	defer release()
	if _, err := media.WriteWAV(f, ra.Channels); err != nil {
		return "", fmt.Errorf("redacted audio: %w", store.NoSpace(err))
	}
	if err := media.Blank(f, ra.Spans, ra.Fill); err != nil {
		return "", fmt.Errorf("redacted audio: %w", store.NoSpace(err))
	}
	if _, err := f.Seek(0, 0); err != nil {
		return "", fmt.Errorf("redacted audio: %w", err)
	}
	name := redactedBlob(job.ID, job.Attempts)
	if _, err := d.db.WriteBlob(name, f, 0); err != nil {
		return "", fmt.Errorf("redacted audio: %w", err)
	}
	return name, nil
}

// storeBlobFile stores the local file at path, which blobFile gave for the
// blob name and which was changed in place, as that blob: with the
// embedded store path is the blob (its change is synced already), with a
// shared store a copy, written back whole (store.WriteBlob replaces the
// name's bytes in one transaction).
func (d *Daemon) storeBlobFile(name, path string) error {
	if _, ok := d.db.LocalBlobPath(name); ok {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = d.db.WriteBlob(name, f, 0)
	return err
}
