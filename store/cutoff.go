package store

import "time"

// Cutoff says which records retention has expired (ExpireJobs,
// ExpireUploads): those created strictly before Before, or, for an account
// Accounts names, before that account's own time.
type Cutoff struct {
	// Before is the cut of every account Accounts does not name; zero
	// expires none of theirs.
	Before time.Time
	// Accounts overrides Before per account; a zero time keeps that
	// account's records.
	Accounts map[string]time.Time
}

// For returns account's cut; zero: nothing of account expires.
func (c Cutoff) For(account string) time.Time {
	if t, ok := c.Accounts[account]; ok {
		return t
	}
	return c.Before
}

// Expired reports whether a record of account created at created has
// expired.
func (c Cutoff) Expired(account string, created time.Time) bool {
	cut := c.For(account)
	return !cut.IsZero() && created.Before(cut)
}

// Latest is the latest cut of any account: nothing created at or after it
// has expired. Zero when nothing expires at all.
func (c Cutoff) Latest() time.Time {
	latest := c.Before
	for _, t := range c.Accounts {
		if t.After(latest) {
			latest = t
		}
	}
	return latest
}
