package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/ingest"
	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/pipeline"
	"github.com/earshot-dev/earshot/store"
)

// Store is what live sessions keep in the store: their job records, the
// keys that created them and the secret that signs their tokens.
type Store interface {
	CreateJob(j *store.Job) error
	Job(id string) (*store.Job, error)
	UpdateJob(id string, fn func(j *store.Job) ([]*store.Delivery, error)) (*store.Job, error)
	DeleteJob(id string) error
	RemoveBlob(name string) error
	Key(id string) (store.Key, error)
	CallbackSecret(account string) ([]byte, error)
}

// RecordingFile is a session's local recording: an *os.File, or with a
// store that seals (store/sealed) a spool sealed as it is written, whose
// clear bytes never reach the disk.
type RecordingFile interface {
	io.Writer
	io.ReaderAt
	io.WriterAt
	io.ReadSeeker
	Sync() error
	Close() error
	Name() string
}

// Recordings is where a session's audio lives on this node: the job
// service's blob files.
type Recordings interface {
	// RecordingPath is the local file a session records the blob name into.
	RecordingPath(name string) (string, error)
	// CreateRecording creates (truncating) the file RecordingPath named;
	// OpenRecording opens it for reading and changing in place.
	CreateRecording(path string) (RecordingFile, error)
	OpenRecording(path string) (RecordingFile, error)
	// CommitRecording stores a finished recording (a file RecordingPath
	// named) in the store.
	CommitRecording(path string) error
	// DropRecording removes a recording that will not be stored (a file
	// RecordingPath named, of a session that never connected or could not
	// be redacted): nothing to do when the file is the blob itself, which
	// the store's RemoveBlob removes.
	DropRecording(path string) error
	// BlobFile is a local file holding a blob's bytes, and its release.
	BlobFile(name string) (path string, release func(), err error)
	// StoreBlobFile stores the file at path, which BlobFile gave for the
	// blob name and which was changed in place (a recording blanked over
	// redacted words), as that blob: nothing to do when path is the blob
	// itself.
	StoreBlobFile(name, path string) error
}

// Signals is how the service tells the job service that it has work or
// news: it never waits on them.
type Signals interface {
	// Queued wakes the workers (a batch pass was queued) and the callback
	// outbox (deliveries were queued).
	Queued(batchPass, deliveries bool)
	// Finished counts a live job that ended with status.
	Finished(status store.Status)
	// AdmitRecording refuses a new recording to an account at its storage
	// quota (limits.max_account_bytes), with the error to answer.
	AdmitRecording(account string) error
	// Audit records what a session's client did outside the API, whose
	// door records its own: a SIP call's session, a WebSocket client's or
	// a caller's keypad's pause and resume (the audit trail's queue).
	Audit(e store.AuditEntry)
}

// Deps are the service's live dependencies, passed beside its Config.
type Deps struct {
	Store      Store
	Recordings Recordings
	Signals    Signals
	// Pipeline routes, recognises and runs the add-ons; the service does
	// not close it.
	Pipeline *pipeline.Transcriber
	// Decoders is the size of the wideband pool that batch passes decode
	// on, which the batch pass's gate counts against when live calls
	// share it (batchpass_gate.go).
	Decoders int
	// CPU is the process's CPU admission policy, the one its engines were
	// given (recognizer.CPU): the sessions' box meter and the batch
	// passes' gate. Nil: a policy of the service's own, live decodes
	// unbounded (tests).
	CPU *recognizer.CPU
	// Log is the service's logger; nil is silent.
	Log *slog.Logger
	// Cluster is the shared store of a cluster (cluster.go), nil on one
	// box; NodeID names this node in it, and RecordingSync is how often a
	// running session's recording is appended to it (recording_sync.go).
	Cluster       Cluster
	NodeID        string
	RecordingSync time.Duration
}

// Service is the job service's live sessions: it admits them, signs their
// tokens, attaches doors and runs one goroutine per session (session.go).
type Service struct {
	cfg  Config
	deps Deps
	db   Store
	pl   *pipeline.Transcriber
	caps params.Capabilities
	log  *slog.Logger
	gate *batchGate
	// created counts the sessions created since start (every door).
	created prometheus.Counter
	// segments counts the ended sessions' decoder segments by search:
	// "full", or "lean" when the box was short of CPU (a session's
	// post_session_metadata.live_search says the same of one session).
	segments *prometheus.CounterVec
	// keys counts the DTMF keys sessions took, by source (dtmf.go).
	keys *prometheus.CounterVec
	// revisions counts the revised finals by outcome (revise.go).
	revisions *prometheus.CounterVec
	// box meters the box's CPU use for every session's lean search
	// (recognizer.BoxLoad).
	box *recognizer.BoxLoad

	stop     chan struct{}  // closed when the shutdown begins: every session finishes
	stopOnce sync.Once      // closes stop
	wg       sync.WaitGroup // the session goroutines
	// halt is the context of what a session does at the shutdown: its
	// engine calls and its post-processing; cancelled when Shutdown's
	// bound is reached.
	halt    context.Context
	haltNow context.CancelCauseFunc

	// admit serialises admitting a session (capacity and quota) with
	// adding it to sessions.
	admit sync.Mutex

	mu       sync.Mutex
	sessions map[string]*session // guarded by mu: sessions not ended, at most Capacity
	stopped  bool                // guarded by mu: the shutdown has begun; no new session
}

// New builds the service from cfg (after SetDefaults and Validate). It
// starts nothing: Run does.
func New(cfg Config, deps Deps) *Service {
	if deps.Log == nil {
		deps.Log = slog.New(slog.DiscardHandler)
	}
	s := &Service{
		cfg: cfg, deps: deps, db: deps.Store, pl: deps.Pipeline, log: deps.Log,
		caps: deps.Pipeline.Capabilities(),
		stop: make(chan struct{}), sessions: map[string]*session{},
		created: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "earshot_live_sessions_total", Help: "Live sessions created since start (every door).",
		}),
		segments: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "earshot_live_segments_total",
			Help: "Embedded-engine decoder segments of the live sessions ended since start, by search: full, or lean when the box was short of CPU.",
		}, []string{"search"}),
	}
	for _, search := range []string{"full", "lean"} {
		s.segments.WithLabelValues(search) // exported at 0 from the start
	}
	s.keys = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "earshot_dtmf_keys_total",
		Help: "DTMF keys live sessions took, by source: rfc4733 (RTP telephone-events), sip_info (SIP INFO), inband (tones in the audio). Floods past a call's bound are not in it (earshot_sip_dtmf_dropped_total).",
	}, []string{"source"})
	for _, src := range []string{ingest.KeyRFC4733, ingest.KeySIPInfo, ingest.KeyInband} {
		s.keys.WithLabelValues(src)
	}
	s.revisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "earshot_live_revisions_total",
		Help: "Revised finals of live sessions that asked for them (receive_revised_transcripts), by outcome: sent; dropped (too many pending in the session, or its end came first); failed (no batch decoder in time, or the decode failed).",
	}, []string{"outcome"})
	for _, o := range []string{revisionSent, revisionDropped, revisionFailed} {
		s.revisions.WithLabelValues(o)
	}
	s.halt, s.haltNow = context.WithCancelCause(context.Background())
	cpu := deps.CPU
	if cpu == nil {
		cpu = recognizer.NewCPU(-1)
	}
	s.box = cpu.Box()
	s.gate = newBatchGate(s, cpu)
	return s
}

// Run keeps the sessions' lifetime until ctx ends. Unless Shutdown has
// begun by then, it then shuts down as Shutdown does, without a bound, and
// returns once every session's goroutine has exited.
func (s *Service) Run(ctx context.Context) error {
	<-ctx.Done()
	if s.shuttingDown() {
		return nil // Shutdown bounds the sessions' end
	}
	return s.Shutdown(context.Background())
}

// Shutdown admits no new session and finishes every running one as at
// stop_recording: the recogniser's last finals, post-processing, the
// result and the recording stored, the client told end_session. A session
// never connected is dropped and stays queued with its token for the next
// start (Recover). Shutdown returns once every session has ended, or when
// ctx ends: the sessions still finishing then have their engine calls and
// post-processing cancelled, and one that cannot store its result keeps
// its job processing, transcribed from its recording at the next start.
func (s *Service) Shutdown(ctx context.Context) error {
	s.stopOnce.Do(func() {
		// A session being admitted (create holds admit from its check to
		// its start) is in sessions, its goroutine running, once the lock
		// is ours.
		s.admit.Lock()
		s.mu.Lock()
		s.stopped = true
		s.mu.Unlock()
		s.admit.Unlock()
		close(s.stop)
	})
	done := make(chan struct{})
	go func() { // ends with the last session, after a cut-short Shutdown too
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		s.haltNow(context.Cause(ctx))
		return context.Cause(ctx)
	}
}

// shuttingDown reports whether the shutdown has begun.
func (s *Service) shuttingDown() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopped
}

// Collectors are the service's own series: sessions created and decoder
// segments by search since start.
func (s *Service) Collectors() []prometheus.Collector {
	return []prometheus.Collector{s.created, s.segments, s.keys, s.revisions}
}

// Sessions is how many sessions exist (created and not ended).
func (s *Service) Sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// CreateLive validates a POST /v2/live body, commits a queued live job and
// returns it with the session token for its WebSocket URL: on this node
// while it has room, else, in a cluster, on another node with room
// (cluster.go), whose base URL it names. keyID is the API key asking:
// revoking it ends the session.
func (s *Service) CreateLive(ctx context.Context, account, keyID, requestID string, body []byte, region string) (ingest.LiveCreated, error) {
	p, err := params.DecodeLive(body, s.caps)
	if err != nil {
		return ingest.LiveCreated{}, err
	}
	if err := s.route(p); err != nil {
		return ingest.LiveCreated{}, err
	}
	if region != "" && region != "us-west" && region != "eu-west" {
		return ingest.LiveCreated{}, &errcode.ValidationError{Problems: []string{"region must be one of us-west, eu-west"}}
	}
	psm := map[string]any{}
	if region != "" {
		psm["region"] = region
	}
	job := &store.Job{Account: account, KeyID: keyID, Status: store.StatusQueued, RequestID: requestID,
		CustomMetadata: p.CustomMetadata, PostSessionMetadata: psm}
	_, nodeURL, err := s.create(job, p, true)
	if err != nil {
		return ingest.LiveCreated{}, err
	}
	tok, err := s.token(job.ID, job.CreatedAt.Add(s.cfg.TokenTTL))
	if err != nil {
		return ingest.LiveCreated{}, err
	}
	return ingest.LiveCreated{ID: job.ID, CreatedAt: job.CreatedAt, Token: tok, NodeURL: nodeURL}, nil
}

// OpenLive opens a live session for a door without an HTTP request of its
// own (SIP): its job is created already attached (one store commit), with
// no WebSocket listener (messages still reach result.messages and the
// callback). The attachment lasts while ctx does; ending the call must
// Stop the session.
func (s *Service) OpenLive(ctx context.Context, req ingest.LiveRequest) (ingest.Session, error) {
	if req.Options == nil {
		return nil, &errcode.ValidationError{Problems: []string{"body: live options are required"}}
	}
	p := *req.Options
	enc := params.EncodingPCM
	switch req.Format.Encoding {
	case media.MuLaw:
		enc = params.EncodingULaw
	case media.ALaw:
		enc = params.EncodingALaw
	}
	if err := p.SetFormat(enc, req.Format.BitDepth, req.Format.SampleRate, req.Format.Channels); err != nil {
		return nil, err
	}
	if err := p.CheckLanguages(s.caps); err != nil {
		return nil, err
	}
	if err := s.route(&p); err != nil {
		return nil, err
	}
	md := map[string]any{}
	for k, v := range p.CustomMetadata {
		md[k] = v
	}
	for k, v := range req.Metadata {
		md[k] = v
	}
	if len(md) == 0 {
		md = nil
	}
	psm := map[string]any{}
	if req.Source != "" {
		psm["source"] = req.Source
	}
	job := &store.Job{Account: req.Account, Status: store.StatusProcessing, CustomMetadata: md, PostSessionMetadata: psm}
	sess, _, err := s.create(job, &p, false)
	if err != nil {
		return nil, err
	}
	s.deps.Signals.Audit(store.AuditEntry{Account: req.Account, Source: req.Source, Action: store.AuditLiveCreate, Object: sess.id})
	return sess.attach(ctx, nil)
}

// create admits a session, commits its job (filled in here: id, kind,
// times, params, recording) in one store commit and starts its goroutine.
// A job created as processing is attached at once by the caller. In a
// cluster the job is placed (cluster.go): with remote, on another node
// when this one is full, and then no session starts here (nil); nodeURL
// is the base URL of the node that runs it ("" on one box).
func (s *Service) create(job *store.Job, p *params.Live, remote bool) (sess *session, nodeURL string, err error) {
	if err := s.deps.Signals.AdmitRecording(job.Account); err != nil {
		return nil, "", err
	}
	s.admit.Lock()
	defer s.admit.Unlock()
	local := s.admitLive(job.Account, p.Channels)
	if errors.Is(local, errcode.ErrLiveQuota) || local != nil && s.deps.Cluster == nil {
		return nil, "", local
	}
	job.ID = uuid.NewString()
	job.Kind = store.KindLive
	job.CreatedAt = time.Now().UTC()
	job.Blob = "live-" + job.ID + ".wav"
	if job.Params, err = json.Marshal(p); err != nil {
		return nil, "", fmt.Errorf("encode params: %w", err)
	}
	if s.deps.Cluster != nil {
		node, err := s.place(job, local, remote)
		if err != nil {
			return nil, "", err
		}
		if node.ID != s.deps.NodeID {
			s.log.Info("live session placed on another node", "session_id", job.ID, "account_id", job.Account, "node_id", node.ID)
			return nil, node.URL, nil
		}
		nodeURL = node.URL
	}
	sess, err = s.newSession(job, p, job.CreatedAt.Add(s.cfg.connectWithin()))
	if err != nil {
		if s.deps.Cluster != nil { // placed here: free the slot
			s.db.DeleteJob(job.ID)
		}
		return nil, "", err
	}
	if s.deps.Cluster == nil {
		if err := s.db.CreateJob(job); err != nil {
			sess.rec.close()
			s.db.RemoveBlob(job.Blob)
			return nil, "", err
		}
	}
	if !s.start(sess) {
		sess.rec.close()
		return nil, "", &errcode.Error{Kind: ingest.ErrAtCapacity, Msg: "shutting down"}
	}
	s.created.Inc()
	s.log.Info("live session created", "session_id", job.ID, "account_id", job.Account)
	return sess, nodeURL, nil
}

// route checks that an engine serves the session's model and languages.
func (s *Service) route(p *params.Live) error {
	_, err := s.pl.Engines.Route(p.Model, p.LanguageConfig.Languages, p.LanguageConfig.CodeSwitching)
	return err
}

// admitLive checks the appliance's live capacity and the account's
// quotas for a new session of channels channels. The caller holds admit.
func (s *Service) admitLive(account string, channels int) error {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return &errcode.Error{Kind: ingest.ErrAtCapacity, Msg: "shutting down"}
	}
	n, mine, myChannels := len(s.sessions), 0, 0
	for _, sess := range s.sessions {
		if sess.account == account {
			mine++
			myChannels += sess.p.Channels
		}
	}
	s.mu.Unlock()
	if n >= s.cfg.Capacity {
		return &errcode.Error{Kind: ingest.ErrAtCapacity, Msg: fmt.Sprintf("%d live sessions open, capacity %d", n, s.cfg.Capacity)}
	}
	if limit := s.cfg.accountLimit(); limit > 0 && mine >= limit {
		return &errcode.Error{Kind: errcode.ErrLiveQuota, Msg: fmt.Sprintf("this account has %d live sessions open, its limit is %d (live.max_sessions_per_account); end one first", mine, limit)}
	}
	switch limit := s.cfg.channelLimit(); {
	case limit > 0 && channels > limit:
		return &errcode.Error{Kind: errcode.ErrLiveQuota, Msg: fmt.Sprintf("a session of %d channels is more than the %d live channels an account may have at once (live.max_channels_per_account)", channels, limit)}
	case limit > 0 && myChannels+channels > limit:
		return &errcode.Error{Kind: errcode.ErrLiveQuota, Msg: fmt.Sprintf("this account has %d live channels open and asks %d more, its limit is %d (live.max_channels_per_account); end a session first", myChannels, channels, limit)}
	}
	return nil
}

// start adds sess to the sessions and starts its goroutine, false once the
// shutdown has begun.
func (s *Service) start(sess *session) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return false
	}
	s.sessions[sess.id] = sess
	s.wg.Go(sess.run)
	return true
}

// drop removes an ended session.
func (s *Service) drop(id string) {
	s.mu.Lock()
	delete(s.sessions, id)
	s.mu.Unlock()
}

func (s *Service) lookup(id string) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[id]
}

func (s *Service) list() []*session {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*session, 0, len(s.sessions))
	for _, sess := range s.sessions {
		out = append(out, sess)
	}
	return out
}

// AttachLive connects a client to the session its token names; l takes
// its messages (nil for an audio-only door, which keeps any WebSocket
// client as the listener). The attachment lasts while ctx does. from is
// the client's address: each attachment is in the audit trail
// (live.stream for a listener, which gets the session's transcripts;
// live.whip for an audio-only door), under the key that created the
// session.
func (s *Service) AttachLive(ctx context.Context, tok, from string, l ingest.Listener) (ingest.Session, error) {
	id, err := s.checkToken(tok)
	if err != nil {
		return nil, err
	}
	sess := s.lookup(id)
	if err := s.checkSessionKey(id, sess); err != nil {
		return nil, err
	}
	if sess == nil {
		// Placed here by another node, its client connecting now.
		sess = s.adopt(id)
	}
	if sess == nil {
		return nil, &errcode.Error{Kind: errcode.ErrNotFound, Msg: fmt.Sprintf("session %s has ended or does not exist", id)}
	}
	att, err := sess.attach(ctx, l)
	if err != nil {
		return nil, err
	}
	action := store.AuditLiveStream
	if l == nil {
		action = store.AuditLiveWHIP
	}
	sess.audit(store.AuditEntry{KeyID: sess.keyID, Account: sess.account, Source: from, Action: action, Object: sess.id})
	return att, nil
}

// AttachAudio attaches an audio-only door (WHIP) to the session a token
// names, keeping any WebSocket client as the listener of its messages. The
// listener should connect first: a later WebSocket attach takes over the
// session, audio included.
func (s *Service) AttachAudio(ctx context.Context, tok, from string) (ingest.Session, error) {
	return s.AttachLive(ctx, tok, from, nil)
}

// End finishes a running session before its job is deleted (its client
// gets end_session); nothing when id runs no session.
func (s *Service) End(id string) {
	if sess := s.lookup(id); sess != nil {
		sess.endFrom(nil)
	}
}
