package live

import (
	"errors"
	"fmt"
	"time"

	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/ingest"
	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/store"
)

// Cluster is the shared store of the nodes of a cluster (a store's Cluster
// capability, adapted as StoreCluster, which the job service hands in): it places live sessions on the nodes with room, hands the sessions
// of a node that stopped to a survivor, and takes a live recording while
// its session runs (recording_sync.go). Nil on one box.
type Cluster interface {
	// Place stores the new live job j on a node with a free live slot and
	// returns that node: this one, taking capacity slots (0: none), while
	// it has room, else with remote another alive node that advertises its
	// URL. The slots are counted in the store, so the nodes never overfill
	// one; no node with room is an error of kind errcode.ErrAtCapacity and
	// nothing is stored.
	Place(j *store.Job, capacity int, remote bool) (Node, error)
	// JobNode returns the node that owns job id.
	JobNode(id string) (string, error)
	// OwnLive returns the ids of this node's live jobs not yet ended.
	OwnLive() ([]string, error)
	// TakeOrphans moves to this node every live job not yet ended whose
	// node stopped sending heartbeats and returns them, each taken by one
	// node only.
	TakeOrphans() ([]store.Orphan, error)
	// AppendBlob adds parts (each at most ChunkSize bytes, each one stored
	// chunk) to the blob name when it holds at bytes, and returns its size
	// after; another size is store.ErrExists and nothing is added.
	AppendBlob(name string, at int64, parts ...[]byte) (int64, error)
	// PatchBlobHead replaces the blob's first chunk with head, as long.
	PatchBlobHead(name string, head []byte) error
	// BlobSize is the size of the blob name.
	BlobSize(name string) (int64, error)
	// ChunkSize bounds one part of AppendBlob.
	ChunkSize() int
}

// Node is a node of a cluster a live session was placed on.
type Node struct {
	ID  string
	URL string // its advertise_url: the base URL its clients reach
}

// orphanCode is the error_code of a live session whose node stopped while
// it ran: the service that ran it became unavailable.
const orphanCode = 503

// errEndedElsewhere is returned by a session's final update when its job
// has ended already: another node ended it as its node's heartbeats had
// stopped (EndOrphans), so the end stays theirs.
var errEndedElsewhere = errors.New("live: session ended by another node")

// checkOpen returns errEndedElsewhere unless j (as stored now) is a live
// job not yet ended.
func checkOpen(j *store.Job) error {
	if j.Status != store.StatusQueued && j.Status != store.StatusProcessing {
		return errEndedElsewhere
	}
	return nil
}

// place stores a new live job through the cluster: on this node when it
// has room (local, its own admission, is nil), else, when remote allows,
// on another. It returns the node chosen.
func (s *Service) place(job *store.Job, local error, remote bool) (Node, error) {
	capacity := s.cfg.Capacity
	if local != nil {
		if !remote {
			return Node{}, local
		}
		capacity = 0
	}
	node, err := s.deps.Cluster.Place(job, capacity, remote)
	switch {
	case errors.Is(err, errcode.ErrAtCapacity) && local != nil:
		return Node{}, local
	case errors.Is(err, errcode.ErrAtCapacity):
		return Node{}, &errcode.Error{Kind: ingest.ErrAtCapacity, Cause: err,
			Msg: fmt.Sprintf("live sessions placed on this node reach its capacity %d", s.cfg.Capacity)}
	case err != nil:
		return Node{}, err
	}
	return node, nil
}

// adopt makes and starts the session of a queued live job another node
// placed on this one, when its client connects before a heartbeat round
// adopted it (AdoptPlaced); nil when id is not such a job.
func (s *Service) adopt(id string) *session {
	if s.deps.Cluster == nil {
		return nil
	}
	if node, err := s.deps.Cluster.JobNode(id); err != nil || node != s.deps.NodeID {
		return nil
	}
	s.admit.Lock()
	defer s.admit.Unlock()
	if sess := s.lookup(id); sess != nil {
		return sess
	}
	j, err := s.db.Job(id)
	if err != nil || j.Kind != store.KindLive || j.Status != store.StatusQueued {
		return nil
	}
	log := s.log.With("component", "live", "session_id", id)
	p, err := params.StoredLive(j.Params)
	if err != nil {
		log.Error("adopt a live session placed here", "error", err)
		return nil
	}
	// The connect timeout runs from the creation, as on the node that
	// created it.
	sess, err := s.newSession(j, p, j.CreatedAt.Add(s.cfg.connectWithin()))
	if err != nil {
		log.Error("adopt a live session placed here", "error", err)
		return nil
	}
	if !s.start(sess) {
		sess.rec.close()
		return nil
	}
	s.created.Inc()
	log.Info("live session placed here adopted")
	return sess
}

// AdoptPlaced starts the session of every live job another node placed on
// this one that has none yet, so its connect timeout runs here even when
// no client comes. A heartbeat round of the job service calls it.
func (s *Service) AdoptPlaced() error {
	if s.deps.Cluster == nil {
		return nil
	}
	ids, err := s.deps.Cluster.OwnLive()
	if err != nil {
		return err
	}
	for _, id := range ids {
		if s.lookup(id) == nil {
			s.adopt(id)
		}
	}
	return nil
}

// EndOrphans ends as error every live session whose node stopped sending
// heartbeats, keeping its recording as far as it reached the shared store.
// A heartbeat round of the job service calls it once this node's own
// heartbeats have gone through for a while.
func (s *Service) EndOrphans() error {
	if s.deps.Cluster == nil {
		return nil
	}
	orphans, err := s.deps.Cluster.TakeOrphans()
	if err != nil {
		return err
	}
	for _, o := range orphans {
		s.endOrphan(o)
	}
	return nil
}

// endOrphan ends one live job taken from a node that stopped: status
// error, error_code 503, the stored recording's header given its real
// length (a recording with no audio is removed, and so is one of a session
// with pii_redaction, never blanked).
func (s *Service) endOrphan(o store.Orphan) {
	log := s.log.With("component", "live", "session_id", o.Job.ID)
	p, perr := params.StoredLive(o.Job.Params)
	if perr != nil {
		p = &params.Live{} // a zero format keeps the header as it is
	}
	f := liveFormat(p)
	blob, audio := o.Job.Blob, int64(0)
	if blob != "" {
		if size, err := s.deps.Cluster.BlobSize(blob); err == nil {
			audio = max(size-media.WAVHeaderSize, 0)
		}
	}
	if fs := int64(f.FrameSize()); audio > 0 && fs > 0 {
		audio -= audio % fs
		if err := s.deps.Cluster.PatchBlobHead(blob, media.AppendWAVHeader(nil, f, audio)); err != nil {
			log.Error("give the recording of a stopped node its length", "error", err)
		}
	}
	dur := 0.0
	if f.SampleRate > 0 && f.FrameSize() > 0 {
		dur = float64(audio) / float64(f.FrameSize()*f.SampleRate)
	}
	reason := fmt.Sprintf("the node running this session (%s) stopped; node %s ended it with the %.1f s of audio that had reached the shared store",
		o.Node, s.deps.NodeID, dur)
	// A session redacting PII never had its recording blanked (its end
	// does that, redact.go): it is not kept; nor is one whose parameters
	// cannot be read (it may have asked for redaction).
	unredacted := audio > 0 && (perr != nil || audioFill(p) != 0)
	if unredacted {
		reason += "; its recording is not kept: it could not be redacted (pii_redaction)"
	}
	empty := ""
	_, err := s.db.UpdateJob(o.Job.ID, func(j *store.Job) ([]*store.Delivery, error) {
		if err := checkOpen(j); err != nil {
			return nil, err // its node came back and ended it first
		}
		j.Status = store.StatusError
		j.CompletedAt = time.Now().UTC()
		j.ErrorCode = orphanCode
		j.ErrorMessage = reason
		if j.PostSessionMetadata == nil {
			j.PostSessionMetadata = map[string]any{}
		}
		j.PostSessionMetadata["error"] = reason
		if audio == 0 || unredacted {
			empty, j.Blob = j.Blob, ""
		} else {
			j.File = liveFileRecord(j.ID, max(p.Channels, 1), dur)
		}
		return nil, nil
	})
	if errors.Is(err, errEndedElsewhere) {
		log.Info("live session of a stopped node had ended meanwhile", "node_id", o.Node)
		return
	}
	if err != nil {
		log.Error("end the live session of a stopped node", "error", err)
		return
	}
	if empty != "" {
		if err := s.db.RemoveBlob(empty); err != nil && !errors.Is(err, store.ErrNotFound) {
			log.Error("remove the recording", "error", err)
		}
	}
	s.deps.Signals.Finished(store.StatusError)
	log.Info("ended the live session of a stopped node", "node_id", o.Node, "audio_seconds", dur)
}
