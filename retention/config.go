package retention

import (
	"errors"
	"time"

	"github.com/earshot-dev/earshot/config"
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
	if c.Interval < time.Minute || c.Interval > 7*24*time.Hour {
		errs = append(errs, config.Errorf("interval", "must be 1m to 168h, not %s", c.Interval))
	}
	return errors.Join(errs...)
}

// enabled reports whether anything expires at all.
func (c Config) enabled() bool {
	return c.PreRecordedDays > 0 || c.LiveDays > 0 || c.UploadDays > 0
}
