package live

import (
	"log/slog"

	"github.com/earshot-dev/earshot/ingest/media"
)

// What the external tests (package live_test: cluster_test.go,
// recording_sync_test.go) reach inside the package. They are external
// because they run the cluster over PostgreSQL (store/postgres),
// which daemon/live's own files never import.

const OrphanCode = orphanCode

var (
	ErrEndedElsewhere = errEndedElsewhere
	CheckOpen         = checkOpen
	CreateRecording   = createRecording
	PlainFiles        = blobFiles{}
)

type (
	Recording     = recording
	RecordingSync = recordingSync
)

// NewClusterService returns a service holding only db and deps: what
// EndOrphans and a recording's sync use.
func NewClusterService(db Store, deps Deps) *Service {
	return &Service{db: db, deps: deps, log: slog.New(slog.DiscardHandler)}
}

func (s *Service) NewRecordingSync(name, path string, log *slog.Logger) *RecordingSync {
	return s.newRecordingSync(name, path, log)
}

func (r *recording) Write(frames []byte) error               { return r.write(frames) }
func (r *recording) Audio() int64                            { return r.audio }
func (r *recording) Finalize(f media.Format) (string, error) { return r.finalize(f) }

func (r *recordingSync) Run()                                    { r.run() }
func (r *recordingSync) Wrote(n int64)                           { r.wrote(n) }
func (r *recordingSync) Halt()                                   { r.halt() }
func (r *recordingSync) Round() error                            { return r.round() }
func (r *recordingSync) Finish(f media.Format, audio int64) bool { return r.finish(f, audio) }

func (r *recordingSync) Rewrite() { r.rewrite() }
