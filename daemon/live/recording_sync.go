package live

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/store"
)

// syncRoundChunks bounds what one sync round appends (in chunks of the
// cluster's store), so a backlog after an outage is caught up over rounds
// in bounded transactions.
const syncRoundChunks = 4

// recordingSync is a live recording's copy in a cluster's shared store,
// so that what reached it outlives the node: a goroutine of its own
// appends the local file's new bytes every Deps.RecordingSync while the
// session runs (the session's goroutine never waits for the store for
// it), and the session's end stores the rest and gives the stored header
// its real sizes (finish). The header is the stored blob's first chunk, so
// a survivor can patch it too (EndOrphans).
type recordingSync struct {
	cl    Cluster
	name  string // the blob
	path  string // the local file
	every time.Duration
	log   *slog.Logger

	// written is what the session has written to the file, header
	// included; set by the session's goroutine, read by the sync's.
	written atomic.Int64

	stop     chan struct{} // closed by halt
	stopOnce sync.Once
	done     chan struct{} // closed when the sync's goroutine has exited

	// Owned by the sync's goroutine until done, then by the session's.
	stored int64 // bytes of the file in the store, header included
	broken bool  // the store holds another size: the end writes the whole file
}

// newRecordingSync returns the sync of a session's recording, nil on one
// box. run starts it.
func (s *Service) newRecordingSync(name, path string, log *slog.Logger) *recordingSync {
	if s.deps.Cluster == nil {
		return nil
	}
	return &recordingSync{cl: s.deps.Cluster, name: name, path: path, every: s.deps.RecordingSync, log: log,
		stop: make(chan struct{}), done: make(chan struct{})}
}

// wrote records that the session's file now holds n bytes (header
// included).
func (r *recordingSync) wrote(n int64) {
	if r != nil {
		r.written.Store(n)
	}
}

// run appends the file's new bytes every r.every until halt. A failed
// round (the database away) is tried again from the same offset the next
// round.
func (r *recordingSync) run() {
	defer close(r.done)
	t := time.NewTicker(r.every)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
		}
		err := r.round()
		switch {
		case err != nil && !failing:
			r.log.Warn("append the live recording to the store", "error", err)
		case err == nil && failing:
			r.log.Info("the live recording reaches the store again")
		}
		failing = err != nil
	}
}

// halt stops the sync's goroutine and returns once it has exited (an
// append in flight ends first, within the store's timeout). Once halted,
// the session's goroutine owns the sync.
func (r *recordingSync) halt() {
	if r == nil {
		return
	}
	r.stopOnce.Do(func() { close(r.stop) })
	<-r.done
}

// round appends up to syncRoundChunks chunks of the file's bytes that are
// written and not stored yet.
func (r *recordingSync) round() error {
	upTo := r.written.Load()
	if r.broken || upTo <= r.stored || upTo <= media.WAVHeaderSize {
		return nil
	}
	return r.appendUpTo(min(upTo, r.stored+int64(syncRoundChunks*r.cl.ChunkSize())))
}

// appendUpTo appends the file's bytes from stored to upTo, the header as
// a chunk of its own. A store that holds another size than expected (an
// append that committed unseen, a blob replaced) gives the sync up: the
// end writes the whole file instead.
func (r *recordingSync) appendUpTo(upTo int64) error {
	f, err := os.Open(r.path)
	if err != nil {
		return err
	}
	defer f.Close()
	var parts [][]byte
	from := r.stored
	if from == 0 {
		from = media.WAVHeaderSize
		parts = append(parts, make([]byte, media.WAVHeaderSize))
		if _, err := f.ReadAt(parts[0], 0); err != nil {
			return err
		}
	}
	for from < upTo {
		b := make([]byte, min(int64(r.cl.ChunkSize()), upTo-from))
		n, err := f.ReadAt(b, from)
		if err != nil && !(errors.Is(err, io.EOF) && n > 0) {
			return err
		}
		parts = append(parts, b[:n])
		from += int64(n)
	}
	size, err := r.cl.AppendBlob(r.name, r.stored, parts...)
	if errors.Is(err, store.ErrExists) {
		r.broken = true
		return err
	}
	if err != nil {
		return err
	}
	r.stored = size
	return nil
}

// finish stores the rest of the finished recording, audio bytes after its
// header, and gives the stored header its real sizes; true when the whole
// recording is in the store and the local file removed. On false the
// caller stores the file whole (Recordings.CommitRecording). The caller
// has halted the sync.
func (r *recordingSync) finish(f media.Format, audio int64) bool {
	if r == nil || r.broken {
		return false
	}
	end := media.WAVHeaderSize + audio
	for r.stored < end { // a bare header too, when nothing was recorded
		if err := r.appendUpTo(min(end, r.stored+int64(syncRoundChunks*r.cl.ChunkSize()))); err != nil {
			r.log.Warn("store the rest of the live recording", "error", err)
			return false
		}
	}
	if err := r.cl.PatchBlobHead(r.name, media.AppendWAVHeader(nil, f, audio)); err != nil {
		r.log.Warn("give the stored live recording its length", "error", err)
		return false
	}
	return os.Remove(r.path) == nil
}
