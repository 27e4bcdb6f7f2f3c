package retention

import (
	"errors"
	"fmt"
	"time"

	"github.com/earshot-dev/earshot/config"
	"github.com/earshot-dev/earshot/store"
)

// Config says how long finished jobs and uploads are kept. The YAML key is
// retention; a zero number of days keeps them forever.
type Config struct {
	// PreRecordedDays deletes pre-recorded jobs that ended (done or error)
	// and were created more than this many days ago, with their audio and
	// result; 0 keeps them forever (default). Jobs with a callback still
	// being retried are kept until the outbox is done with them.
	PreRecordedDays int `yaml:"pre_recorded_days"`
	// LiveDays does the same for live sessions; 0 keeps them forever (default).
	LiveDays int `yaml:"live_days"`
	// UploadDays deletes uploaded files (POST /v2/upload) older than this;
	// jobs already made from them keep their audio. 0 keeps them forever
	// (default).
	UploadDays int `yaml:"upload_days"`
	// Interval is how often retention runs (also once at start); default 1h.
	Interval time.Duration `yaml:"interval"`
	// Accounts overrides the day counts per account: a kind an entry
	// leaves out takes the setting above; 0 keeps that account's records
	// of the kind forever. Default none.
	Accounts []Account `yaml:"accounts"`
}

// Account is one account's retention (retention.accounts[]).
type Account struct {
	// Account is the account's name.
	Account string `yaml:"account"`
	// PreRecordedDays, LiveDays and UploadDays override the section's for
	// this account; unset takes the section's.
	PreRecordedDays *int `yaml:"pre_recorded_days"`
	LiveDays        *int `yaml:"live_days"`
	UploadDays      *int `yaml:"upload_days"`
}

// maxDays bounds the day counts (100 years).
const maxDays = 36500

// SetDefaults fills zero fields: Interval 1h.
func (c *Config) SetDefaults() {
	if c.Interval == 0 {
		c.Interval = time.Hour
	}
}

// Validate checks the retention settings, each problem naming its key.
func (c Config) Validate() error {
	var errs []error
	for _, f := range []struct {
		key  string
		days int
	}{
		{"pre_recorded_days", c.PreRecordedDays},
		{"live_days", c.LiveDays},
		{"upload_days", c.UploadDays},
	} {
		if f.days < 0 || f.days > maxDays {
			errs = append(errs, config.Errorf(f.key, "must be 0 (keep forever) to %d, not %d", maxDays, f.days))
		}
	}
	seen := map[string]bool{}
	for i, a := range c.Accounts {
		key := fmt.Sprintf("accounts[%d]", i)
		if !store.ValidAccount(a.Account) {
			errs = append(errs, config.Errorf(key+".account", "must be an account name ([A-Za-z0-9._-]{1,64}), not %q", a.Account))
		}
		if seen[a.Account] {
			errs = append(errs, config.Errorf(key+".account", "%q is listed twice", a.Account))
		}
		seen[a.Account] = true
		for _, f := range []struct {
			key  string
			days *int
		}{{"pre_recorded_days", a.PreRecordedDays}, {"live_days", a.LiveDays}, {"upload_days", a.UploadDays}} {
			if f.days != nil && (*f.days < 0 || *f.days > maxDays) {
				errs = append(errs, config.Errorf(key+"."+f.key, "must be 0 (keep forever) to %d, not %d", maxDays, *f.days))
			}
		}
	}
	if c.Interval < time.Minute || c.Interval > 7*24*time.Hour {
		errs = append(errs, config.Errorf("interval", "must be 1m to 168h, not %s", c.Interval))
	}
	return errors.Join(errs...)
}

// enabled reports whether anything expires at all.
func (c Config) enabled() bool {
	if c.PreRecordedDays > 0 || c.LiveDays > 0 || c.UploadDays > 0 {
		return true
	}
	for _, a := range c.Accounts {
		for _, d := range []*int{a.PreRecordedDays, a.LiveDays, a.UploadDays} {
			if d != nil && *d > 0 {
				return true
			}
		}
	}
	return false
}

// cutoff is the store.Cutoff of one kind at now: days is the section's
// day count, override picks an account's.
func (c Config) cutoff(now time.Time, days int, override func(Account) *int) store.Cutoff {
	at := func(d int) time.Time {
		if d <= 0 {
			return time.Time{} // keep forever
		}
		return now.Add(-time.Duration(d) * 24 * time.Hour)
	}
	cut := store.Cutoff{Before: at(days)}
	for _, a := range c.Accounts {
		if d := override(a); d != nil {
			if cut.Accounts == nil {
				cut.Accounts = map[string]time.Time{}
			}
			cut.Accounts[a.Account] = at(*d)
		}
	}
	return cut
}
