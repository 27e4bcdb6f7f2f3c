package store

import (
	"slices"
	"time"
)

// Scope is one right an API key may hold. The doors decide which scope
// each request needs (api/scopes.go, one table); the store keeps a key's
// scopes and refuses names it does not know.
type Scope string

// The scopes, as POST /admin/keys and `earshotd keys create --scopes` take
// them.
const (
	// ScopeJobsRead lists and reads jobs (records and results) and the
	// engines.
	ScopeJobsRead Scope = "jobs:read"
	// ScopeJobsWrite creates and deletes pre-recorded jobs, uploads and
	// deletes files, deletes live jobs.
	ScopeJobsWrite Scope = "jobs:write"
	// ScopeAudioRead downloads audio: a job's file, a live recording, an
	// upload.
	ScopeAudioRead Scope = "audio:read"
	// ScopeLive opens live sessions and pauses or resumes them.
	ScopeLive Scope = "live"
	// ScopeAdmin manages keys and reads the cluster's nodes (/admin/...);
	// only a key of AdminAccount may hold it.
	ScopeAdmin Scope = "admin"
)

// Scopes lists every scope, in the order they are shown.
var Scopes = []Scope{ScopeJobsRead, ScopeJobsWrite, ScopeAudioRead, ScopeLive, ScopeAdmin}

// Valid reports whether s is one of Scopes.
func (s Scope) Valid() bool { return slices.Contains(Scopes, s) }

// KeyGrant is what a new key may do: CreateKey's second argument.
type KeyGrant struct {
	// Scopes are the key's rights; nil (or empty) gives every scope, as
	// keys had before scopes existed. A name not in Scopes, or ScopeAdmin
	// on a key of another account than AdminAccount, is ErrInvalid.
	Scopes []Scope
	// ExpiresAt is when the key stops authenticating; zero never.
	ExpiresAt time.Time
}

// ValidFor reports whether a backend may store g for a key of account:
// every scope known, ScopeAdmin only for AdminAccount.
func (g KeyGrant) ValidFor(account string) bool {
	for _, s := range g.Scopes {
		if !s.Valid() || s == ScopeAdmin && account != AdminAccount {
			return false
		}
	}
	return true
}

// Normal returns the scopes a backend stores for g: without repeats, in
// the order of Scopes; nil (every scope) when g lists none.
func (g KeyGrant) Normal() []Scope {
	if len(g.Scopes) == 0 {
		return nil
	}
	var out []Scope
	for _, s := range Scopes {
		if slices.Contains(g.Scopes, s) {
			out = append(out, s)
		}
	}
	return out
}

// Allows reports whether k holds scope s: every key made without scopes
// (Scopes nil) holds them all.
func (k Key) Allows(s Scope) bool { return k.Scopes == nil || slices.Contains(k.Scopes, s) }

// Granted lists the scopes k holds (all of Scopes when k.Scopes is nil).
func (k Key) Granted() []Scope {
	if k.Scopes == nil {
		return slices.Clone(Scopes)
	}
	return slices.Clone(k.Scopes)
}

// Expired reports whether k has an expiry and it has passed at now.
func (k Key) Expired(now time.Time) bool { return !k.ExpiresAt.IsZero() && !now.Before(k.ExpiresAt) }
