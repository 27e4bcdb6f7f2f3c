package daemon_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/app"
)

// TestStoreConfig: store.backend, store.dsn, cluster.node_id and
// cluster.advertise_url are set by the file, EARSHOT_* and Set like every
// key, validated, and the DSN never printed.
func TestStoreConfig(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(p, []byte("store:\n  backend: postgres\ncluster:\n  node_id: node-a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const dsn = "postgres://earshot:pw-SECRET@db:5432/earshot"
	c, err := app.Load(p, []string{"EARSHOT_STORE_DSN=" + dsn})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Set("cluster.advertise_url", "http://10.0.0.5:8080"); err != nil {
		t.Fatal(err)
	}
	c.SetDefaults()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Store.Backend != "postgres" || string(c.Store.DSN) != dsn || c.Cluster.NodeID != "node-a" || c.Cluster.AdvertiseURL != "http://10.0.0.5:8080" {
		t.Errorf("loaded %+v %+v", c.Store.Backend, c.Cluster)
	}
	if s := fmt.Sprintf("%v %+v %#v", c.Store, c, c.Store); strings.Contains(s, "pw-SECRET") {
		t.Errorf("config prints the DSN's password: %s", s)
	}

	var d app.Config
	d.SetDefaults()
	if d.Store.Backend != "bbolt" || d.Cluster.NodeID == "" {
		t.Errorf("defaults: backend %q, node_id %q", d.Store.Backend, d.Cluster.NodeID)
	}
	if err := d.Validate(); err != nil {
		t.Errorf("defaults do not validate: %v", err)
	}

	for _, tc := range []struct {
		name, key, value, want string
	}{
		{"unknown backend", "store.backend", "mysql", "store.backend: must be bbolt or postgres"},
		{"postgres without dsn", "store.backend", "postgres", "store.dsn: must be set"},
		{"bad node id", "cluster.node_id", "a b", "cluster.node_id: must be"},
		{"bad advertise url", "cluster.advertise_url", "10.0.0.5:8080", "cluster.advertise_url: must be"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c app.Config
			if err := c.Set(tc.key, tc.value); err != nil {
				t.Fatal(err)
			}
			c.SetDefaults()
			if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate = %v, want %q", err, tc.want)
			}
		})
	}
	var e app.Config
	if err := e.Set("store.dsn", "postgres://x@y/z"); err != nil {
		t.Fatal(err)
	}
	e.SetDefaults()
	if err := e.Validate(); err == nil || !strings.Contains(err.Error(), "store.dsn: only with store.backend postgres") {
		t.Errorf("bbolt with a dsn: Validate = %v", err)
	}
}
