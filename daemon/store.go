package daemon

import (
	"log/slog"
	"net/url"
	"os"
	"time"

	"github.com/earshot-dev/earshot/config"
	"github.com/earshot-dev/earshot/store"
)

// Store backends (store.backend).
const (
	BackendBbolt    = "bbolt"
	BackendPostgres = "postgres"
)

// StoreConfig is the store: section: where earshot keeps its state.
type StoreConfig struct {
	// Backend is bbolt (the embedded store in data_dir: one box, nothing
	// else to run) or postgres (the shared store of a cluster, at dsn);
	// default bbolt.
	Backend string `yaml:"backend"`
	// DSN is the PostgreSQL connection string (a libpq URL,
	// postgres://user:password@host:5432/earshot?sslmode=verify-full, or
	// key=value pairs) when backend is postgres; default "". It may hold a
	// password: it prints as REDACTED.
	DSN config.Secret `yaml:"dsn"`
	// EncryptionKeyFile is a file of 32 random bytes (the key-encryption
	// key; `earshotd keys generate-data-key` makes one), owner-only (mode
	// 0600 or 0400), which turns on encryption at rest (store/sealed);
	// default "": the systemd credential earshot-data-key when the unit
	// loads one ($CREDENTIALS_DIRECTORY), else off. A data dir once sealed
	// refuses to start without it. With backend postgres every node of the
	// cluster names the same key (the data keys it wraps are in the shared
	// database, table data_keys), and a database once sealed refuses a
	// node without it.
	EncryptionKeyFile string `yaml:"encryption_key_file"`
}

// SetDefaults fills zero fields.
func (c *StoreConfig) SetDefaults() {
	if c.Backend == "" {
		c.Backend = BackendBbolt
	}
}

// Validate checks the store settings without I/O, each problem naming its
// key.
func (c StoreConfig) Validate() error {
	switch c.Backend {
	case BackendBbolt:
		if c.DSN != "" {
			return config.Errorf("dsn", "only with store.backend postgres (the bbolt store lives in data_dir)")
		}
	case BackendPostgres:
		if c.DSN == "" {
			return config.Errorf("dsn", "must be set with store.backend postgres")
		}
	default:
		return config.Errorf("backend", "must be bbolt or postgres, not %q", c.Backend)
	}
	return nil
}

// LogValue prints the section with the DSN redacted.
func (c StoreConfig) LogValue() slog.Value {
	return slog.GroupValue(slog.String("backend", c.Backend), slog.Any("dsn", c.DSN), slog.String("encryption_key_file", c.EncryptionKeyFile))
}

// ClusterConfig is the cluster: section: this node's name and address
// among the nodes sharing a postgres store.
type ClusterConfig struct {
	// NodeID names this node: its claims on queued jobs and callbacks,
	// its live sessions. Unique per node, [A-Za-z0-9._-]{1,64}; default
	// the host name.
	NodeID string `yaml:"node_id"`
	// AdvertiseURL is this node's own base URL as the other nodes and
	// clients reach it (http:// or https://); default "" (public_url, or
	// each request's own).
	AdvertiseURL string `yaml:"advertise_url"`
	// JobLease is how long a pre-recorded job or batch pass claimed by this
	// node stays its own without a renewal: after a node dies, its jobs go
	// back to the queue within about this long. Default 30s; at least 1s.
	JobLease time.Duration `yaml:"job_lease"`
	// RecordingSync is how often a live recording's new audio is appended
	// to the shared store while the session runs: a node that dies loses
	// at most about this much of each call. Default 1s; 100ms to 1m.
	RecordingSync time.Duration `yaml:"recording_sync"`
}

// SetDefaults fills zero fields: NodeID from the host name.
func (c *ClusterConfig) SetDefaults() {
	if c.NodeID == "" {
		c.NodeID = defaultNodeID()
	}
	if c.JobLease == 0 {
		c.JobLease = store.DefaultJobLease
	}
	if c.RecordingSync == 0 {
		c.RecordingSync = time.Second
	}
}

// defaultNodeID is the host name cut to a valid node id, "earshot" without one.
func defaultNodeID() string {
	h, _ := os.Hostname()
	b := make([]byte, 0, len(h))
	for i := 0; i < len(h) && len(b) < 64; i++ {
		c := h[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' {
			b = append(b, c)
		}
	}
	if len(b) == 0 {
		return "earshot"
	}
	return string(b)
}

// Validate checks the cluster settings without I/O, each problem naming
// its key.
func (c ClusterConfig) Validate() error {
	if !store.ValidAccount(c.NodeID) { // the same alphabet and length
		return config.Errorf("node_id", "must be 1 to 64 of A-Z a-z 0-9 . _ -, not %q", c.NodeID)
	}
	if c.JobLease < time.Second {
		return config.Errorf("job_lease", "must be at least 1s, not %s", c.JobLease)
	}
	if c.RecordingSync < 100*time.Millisecond || c.RecordingSync > time.Minute {
		return config.Errorf("recording_sync", "must be 100ms to 1m, not %s", c.RecordingSync)
	}
	if c.AdvertiseURL != "" {
		u, err := url.Parse(c.AdvertiseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return config.Errorf("advertise_url", "must be an http:// or https:// URL with a host, not %q", c.AdvertiseURL)
		}
	}
	return nil
}

// leasesKept logs a round of KeepLeases and wakes the workers for the jobs
// it put back in the queue.
func (d *Daemon) leasesKept(requeued []string, err error) {
	if err != nil {
		d.log.Warn("renew job leases", "component", "store", "error", err)
	}
	if len(requeued) > 0 {
		d.log.Info("requeued jobs of a node whose lease ended", "component", "store", "count", len(requeued), "job_ids", requeued)
		d.wakeWorkers()
	}
}
