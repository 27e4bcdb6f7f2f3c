package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// AuditAction is what an audit entry records, spelled as GET /admin/audit
// shows and filters it: the object's kind, a dot, the verb.
type AuditAction string

// Audit actions. A door's entries carry the HTTP status it answered
// (AuditEntry.Status); the daemon's own (retention, reload) carry 0.
const (
	AuditPreRecordedCreate  AuditAction = "pre-recorded.create"
	AuditPreRecordedRead    AuditAction = "pre-recorded.read"
	AuditPreRecordedList    AuditAction = "pre-recorded.list"
	AuditPreRecordedAudio   AuditAction = "pre-recorded.audio"
	AuditPreRecordedDelete  AuditAction = "pre-recorded.delete"
	AuditPreRecordedHold    AuditAction = "pre-recorded.hold"
	AuditPreRecordedRelease AuditAction = "pre-recorded.release"
	AuditPreRecordedExpire  AuditAction = "pre-recorded.expire"
	AuditLiveCreate         AuditAction = "live.create"
	AuditLiveRead           AuditAction = "live.read"
	AuditLiveList           AuditAction = "live.list"
	AuditLiveAudio          AuditAction = "live.audio"
	AuditLiveDelete         AuditAction = "live.delete"
	AuditLivePause          AuditAction = "live.pause"
	AuditLiveResume         AuditAction = "live.resume"
	AuditLiveHold           AuditAction = "live.hold"
	AuditLiveRelease        AuditAction = "live.release"
	AuditLiveExpire         AuditAction = "live.expire"
	AuditLiveStream         AuditAction = "live.stream" // a WebSocket client attached: it gets the transcripts
	AuditLiveWHIP           AuditAction = "live.whip"   // a WHIP peer attached: it sends the audio
	AuditUploadCreate       AuditAction = "upload.create"
	AuditUploadRead         AuditAction = "upload.read"
	AuditUploadDelete       AuditAction = "upload.delete"
	AuditUploadExpire       AuditAction = "upload.expire"
	AuditKeyCreate          AuditAction = "key.create"
	AuditKeyRevoke          AuditAction = "key.revoke"
	AuditConfigReload       AuditAction = "config.reload"
	AuditRead               AuditAction = "audit.read"
)

// AuditEntry is one record of the audit trail: who (KeyID, Account,
// Source) did what (Action) to which object (Object: a job, upload or key
// id), when (At), and what the door answered (Status). It holds ids,
// actions and key ids only: never a secret, a transcript, metadata or a
// digit a caller keyed.
//
// Seq, Prev and Hash are the chain, set by AppendAudit: Seq counts entries
// from 1 with no gap, Prev is the Hash of entry Seq-1 (of the anchor for
// the first entry kept), and Hash is the SHA-256 of the entry's canonical
// encoding (AuditHash), Prev included, so editing, removing or reordering
// an entry breaks the chain from there on (VerifyAuditLink).
type AuditEntry struct {
	Seq     uint64      `json:"seq"`
	At      time.Time   `json:"at"`
	KeyID   string      `json:"key_id,omitempty"`  // the API key's id; "" for the daemon itself
	Account string      `json:"account,omitempty"` // the key's account
	Source  string      `json:"source,omitempty"`  // the client's address, "admin-socket", "signal"...
	Action  AuditAction `json:"action"`
	Object  string      `json:"object,omitempty"` // the job, upload or key id
	Status  int         `json:"status,omitempty"` // the door's HTTP status; 0 outside a door
	Prev    []byte      `json:"prev"`
	Hash    []byte      `json:"hash"`
}

// AuditAnchor is where the kept chain starts: the Seq and Hash of the last
// entry ExpireAudit removed (Seq 0 and a nil Hash while none was), so the
// chain can be verified across its retention cut.
type AuditAnchor struct {
	Seq  uint64
	Hash []byte
}

// AuditQuery selects audit entries for ListAudit. Empty fields match all.
type AuditQuery struct {
	Account string
	Object  string
	Action  AuditAction
	Since   time.Time // At >= Since
	Until   time.Time // At < Until
	// AfterSeq keeps entries with Seq > AfterSeq (a verifier's cursor).
	AfterSeq uint64
	// Newest lists the newest first; otherwise in sequence order.
	Newest bool
	Offset int
	Limit  int // 1 to MaxAuditPage
}

// MaxAuditPage bounds AuditQuery.Limit.
const MaxAuditPage = 10000

// MaxAuditField bounds each string field of an entry (a key id, account,
// address, action or object id is far shorter).
const MaxAuditField = 512

// PrepareAudit checks a new entry before AppendAudit chains it: an action,
// each string field valid UTF-8 without NUL and within MaxAuditField
// bytes (what both backends store and read back unchanged, so the hash
// holds), a time within 1678–2262 (a zero At is now). It puts At in UTC.
// A failure wraps ErrInvalid.
func PrepareAudit(e *AuditEntry) error {
	if e.At.IsZero() {
		e.At = time.Now()
	}
	e.At = e.At.UTC()
	if e.Action == "" || e.At.Before(minTime) || e.At.After(maxTime) {
		return fmt.Errorf("audit entry: action %q at %s: %w", e.Action, e.At, ErrInvalid)
	}
	for _, f := range []string{e.KeyID, e.Account, e.Source, string(e.Action), e.Object} {
		if len(f) > MaxAuditField {
			return fmt.Errorf("audit entry: field of %d bytes > limit %d: %w", len(f), MaxAuditField, ErrInvalid)
		}
		if !utf8.ValidString(f) || strings.IndexByte(f, 0) >= 0 {
			return fmt.Errorf("audit entry: field not valid UTF-8 or holding NUL: %w", ErrInvalid)
		}
	}
	return nil
}

// SanitizeAudit makes what a client sent fit an entry: invalid UTF-8 and
// NUL bytes replaced by U+FFFD, cut to MaxAuditField bytes on a rune
// boundary.
func SanitizeAudit(s string) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
	if len(s) <= MaxAuditField {
		return s
	}
	cut := MaxAuditField
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// Chain sets e's Seq, Prev and Hash as the entry after prev (the head's Seq
// and Hash, or the anchor's while no entry is kept). Both backends call it
// under the lock that serialises appends.
func (e *AuditEntry) Chain(prevSeq uint64, prevHash []byte) {
	e.Seq = prevSeq + 1
	e.Prev = bytes.Clone(prevHash)
	e.Hash = AuditHash(e)
}

// auditDomain separates this hash from any other SHA-256 of the same bytes.
const auditDomain = "earshot audit v1\x00"

// AuditHash is the SHA-256 of e's canonical encoding: the domain string,
// Seq and At (Unix nanoseconds) as 8 bytes big-endian, Status as 8 bytes,
// then KeyID, Account, Source, Action, Object and Prev, each as a 4-byte
// big-endian length and its bytes. Hash itself is not part of it.
func AuditHash(e *AuditEntry) []byte {
	h := sha256.New()
	var n [8]byte
	h.Write([]byte(auditDomain))
	for _, v := range []uint64{e.Seq, uint64(e.At.UnixNano()), uint64(int64(e.Status))} {
		binary.BigEndian.PutUint64(n[:], v)
		h.Write(n[:])
	}
	for _, f := range [][]byte{[]byte(e.KeyID), []byte(e.Account), []byte(e.Source), []byte(e.Action), []byte(e.Object), e.Prev} {
		binary.BigEndian.PutUint32(n[:4], uint32(len(f)))
		h.Write(n[:4])
		h.Write(f)
	}
	return h.Sum(nil)
}

// VerifyAuditLink checks that e follows the entry (or anchor) prevSeq,
// prevHash: its Seq is the next, its Prev is prevHash and its Hash is its
// own AuditHash. It returns nil or what is wrong, wrapping ErrAuditBroken.
func VerifyAuditLink(prevSeq uint64, prevHash []byte, e *AuditEntry) error {
	switch {
	case e.Seq != prevSeq+1:
		return fmt.Errorf("audit entry %d follows %d: entries missing: %w", e.Seq, prevSeq, ErrAuditBroken)
	case !bytes.Equal(e.Prev, prevHash):
		return fmt.Errorf("audit entry %d: prev is not the hash of entry %d: %w", e.Seq, prevSeq, ErrAuditBroken)
	case !bytes.Equal(e.Hash, AuditHash(e)):
		return fmt.Errorf("audit entry %d: hash does not match its contents: %w", e.Seq, ErrAuditBroken)
	}
	return nil
}

// Matches reports whether e is one q selects (its filters, not its paging).
func (q AuditQuery) Matches(e *AuditEntry) bool {
	return e.Seq > q.AfterSeq &&
		(q.Account == "" || e.Account == q.Account) &&
		(q.Object == "" || e.Object == q.Object) &&
		(q.Action == "" || e.Action == q.Action) &&
		(q.Since.IsZero() || !e.At.Before(q.Since)) &&
		(q.Until.IsZero() || e.At.Before(q.Until))
}

// CheckAuditQuery checks a query's paging: Offset >= 0, Limit 1 to
// MaxAuditPage. A failure wraps ErrInvalid.
func CheckAuditQuery(q AuditQuery) error {
	if q.Offset < 0 || q.Limit < 1 || q.Limit > MaxAuditPage {
		return fmt.Errorf("audit query: offset %d limit %d: %w", q.Offset, q.Limit, ErrInvalid)
	}
	return nil
}
