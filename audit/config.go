package audit

import (
	"errors"
	"time"

	"github.com/earshot-dev/earshot/config"
)

// Config bounds the audit trail. The YAML key is audit.
type Config struct {
	// RetentionDays removes entries older than this many days; default
	// 400 (13 months: PCI DSS 10.5.1 asks for a year of audit history,
	// and a yearly review needs the year before it whole). 1 to 36500.
	RetentionDays int `yaml:"retention_days"`
	// MaxEntries keeps at most this many entries, the oldest removed
	// first, whatever their age; default 2000000 (about 0.9 GB in bbolt at
	// the 440 bytes an entry BenchmarkAuditAppend measures: 40 days of a
	// box answering 50000 audited requests a day, a year at 5000). 1000 to
	// 1000000000.
	MaxEntries int `yaml:"max_entries"`
	// Queue is how many entries wait for the store at most; one more is
	// dropped and counted, never waited for. Default 8192.
	Queue int `yaml:"queue"`
	// Interval is how often the bounds are applied (also once at start);
	// default 1h.
	Interval time.Duration `yaml:"interval"`
}

// Bounds of the settings.
const (
	maxDays       = 36500
	minMaxEntries = 1000
)

// SetDefaults fills zero fields: RetentionDays 400, MaxEntries 2000000,
// Queue 8192, Interval 1h.
func (c *Config) SetDefaults() {
	if c.RetentionDays == 0 {
		c.RetentionDays = 400
	}
	if c.MaxEntries == 0 {
		c.MaxEntries = 2_000_000
	}
	if c.Queue == 0 {
		c.Queue = 8192
	}
	if c.Interval == 0 {
		c.Interval = time.Hour
	}
}

// Validate checks the settings, each problem naming its key.
func (c Config) Validate() error {
	var errs []error
	if c.RetentionDays < 1 || c.RetentionDays > maxDays {
		errs = append(errs, config.Errorf("retention_days", "must be 1 to %d, not %d", maxDays, c.RetentionDays))
	}
	if c.MaxEntries < minMaxEntries || c.MaxEntries > 1_000_000_000 {
		errs = append(errs, config.Errorf("max_entries", "must be %d to 1000000000, not %d", minMaxEntries, c.MaxEntries))
	}
	if c.Queue < 1 || c.Queue > 1<<20 {
		errs = append(errs, config.Errorf("queue", "must be 1 to %d, not %d", 1<<20, c.Queue))
	}
	if c.Interval < time.Minute || c.Interval > 7*24*time.Hour {
		errs = append(errs, config.Errorf("interval", "must be 1m to 168h, not %s", c.Interval))
	}
	return errors.Join(errs...)
}
