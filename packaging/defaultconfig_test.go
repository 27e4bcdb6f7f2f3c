package packaging

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/earshot-dev/earshot/app"
)

// TestDefaultConfigMatchesDaemon: earshot.yaml loads as the daemon loads
// it (unknown keys are errors), gives exactly SetDefaults' values but for
// the retention it ships, and
// spells out every key of app.Config.
func TestDefaultConfigMatchesDaemon(t *testing.T) {
	path := filepath.Join(t.TempDir(), "earshot.yaml")
	if err := os.WriteFile(path, DefaultConfig(), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := app.Load(path, nil)
	if err != nil {
		t.Fatalf("earshot.yaml does not load (add the key to its module's Config or drop it here): %v", err)
	}
	got.SetDefaults()
	var want app.Config
	want.SetDefaults()
	// The one deliberate difference: the .deb keeps a call recorder's data
	// a bounded time (docs/deployment.md, Retention), where the daemon
	// without a config file keeps everything.
	want.Retention.PreRecordedDays, want.Retention.LiveDays, want.Retention.UploadDays = 30, 90, 1
	if !reflect.DeepEqual(got, want) {
		t.Errorf("earshot.yaml + SetDefaults:\n%+v\nSetDefaults alone:\n%+v", got, want)
	}

	var doc yaml.Node
	if err := yaml.Unmarshal(DefaultConfig(), &doc); err != nil {
		t.Fatal(err)
	}
	inFile := map[string]bool{}
	var walk func(n *yaml.Node, prefix string)
	walk = func(n *yaml.Node, prefix string) {
		for i := 0; n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
			k := prefix + n.Content[i].Value
			inFile[k] = true
			walk(n.Content[i+1], k+".")
		}
	}
	walk(doc.Content[0], "")
	for _, k := range app.Keys() {
		if !inFile[k.Path] {
			t.Errorf("earshot.yaml does not document %s", k.Path)
		}
	}
	// Every top-level key carries a comment saying what it is.
	top := doc.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		if k := top.Content[i]; strings.TrimSpace(k.HeadComment) == "" {
			t.Errorf("earshot.yaml: %s (line %d) has no comment", k.Value, k.Line)
		}
	}
}
