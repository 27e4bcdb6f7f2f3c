package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/earshot-dev/earshot/daemon"
	"github.com/earshot-dev/earshot/daemon/params"
	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/recognizer/sphinx"
)

// cmdTranscribe runs the pre-recorded pipeline on a local file, without a
// daemon or a store, and prints the result JSON.
func cmdTranscribe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("transcribe", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "YAML config file (engine settings)")
	decoders := fs.Int("decoders", 0, "PocketSphinx decoders (default: CPUs)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("transcribe: exactly one FILE is required")
	}
	path := fs.Arg(0)
	if _, err := os.Stat(path); err != nil {
		return err
	}
	cfg, err := loadConfig(*cfgPath, os.Environ(), func(c *daemon.Config) error {
		if *decoders != 0 {
			c.Sphinx.Decoders = *decoders
		}
		return nil
	})
	if err != nil {
		return err
	}
	eng, err := sphinx.New(cfg.Sphinx, nil)
	if err != nil {
		return err
	}
	defer eng.Close()
	tr := &daemon.Transcriber{Engine: eng, Media: media.Options{FFmpeg: cfg.FFmpeg, MaxDuration: cfg.Limits.MaxAudioDuration}}
	// The telephone-band pool, for 8 kHz and band-limited audio (as many
	// decoders as the wideband pool: the run uses one of the two).
	tel, err := sphinx.NewTelephone(cfg.Sphinx, nil)
	if err != nil {
		return err
	}
	defer tel.Close()
	if tel != nil {
		tr.Telephone = tel
	}
	p := &params.PreRecorded{AudioURL: "file://" + path, Model: "model-1"}
	res, _, err := tr.TranscribeFile(ctx, path, p)
	if err != nil {
		return fmt.Errorf("transcribe %s: %w", path, err)
	}
	// The result has no post_session_metadata; say which model ran.
	if m, ok := res.PostSessionMetadata["acoustic_model"]; ok {
		fmt.Fprintf(stderr, "transcribe: acoustic model %v, audio band %v\n", m, res.PostSessionMetadata["audio_band"])
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}
