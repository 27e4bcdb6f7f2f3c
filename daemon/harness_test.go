package daemon

import (
	"log/slog"
	"testing"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/pipeline"
	"github.com/earshot-dev/earshot/recognizer/sphinx"
	"github.com/earshot-dev/earshot/store/storetest/memstore"
)

// speech is a real recording of speech (16 kHz mono WAV, 9.7 s).
const speech = "../../shared/testdata/speech/ljspeech-LJ001-0001.wav"

// testConfig is the smallest daemon: one decoder of each pool, no
// telephone model, its data in a fresh directory.
func testConfig(t *testing.T) Config {
	t.Helper()
	var cfg Config
	cfg.DataDir = t.TempDir()
	cfg.Sphinx.Decoders = 1
	cfg.Sphinx.LiveDecoders = 1
	cfg.Sphinx.TelephoneHMM = sphinx.NoTelephoneHMM
	cfg.Sphinx.OverloadMaxHMMsPerFrame = -1
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// newTestDaemon builds a daemon on an in-memory store with the real
// engine (one decoder), not running: a test calls the methods it tests,
// or runs workers itself. Close is a cleanup.
func newTestDaemon(t *testing.T, edit func(*Config)) (*Daemon, *memstore.Store) {
	t.Helper()
	cfg := testConfig(t)
	if edit != nil {
		edit(&cfg)
	}
	db := memstore.New()
	d := New(cfg, db, testPipeline(t, cfg), slog.New(slog.DiscardHandler))
	t.Cleanup(func() { d.Close() })
	return d, db
}

// testPipeline builds the recognition pipeline of cfg as the composition
// root does, with the real engine.
func testPipeline(t *testing.T, cfg Config) *pipeline.Transcriber {
	t.Helper()
	pl, err := pipeline.New(cfg.ServicePipeline(), recognizer.NewCPU(cfg.Sphinx.LiveDecodes), nil)
	if err != nil {
		t.Fatal(err)
	}
	return pl
}
