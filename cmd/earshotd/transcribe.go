package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"

	"github.com/earshot-dev/earshot/app"
	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/pipeline"
)

// cmdTranscribe runs the pre-recorded pipeline on a local file, without a
// daemon or a store, and prints the result JSON: the engines, routing and
// add-ons of the configuration (--config, EARSHOT_*, --set, as for run), and
// the options of a pre-recorded request (--request, a SPEC 2.4 body without
// audio_url), refused as POST /v2/pre-recorded would refuse them.
func cmdTranscribe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("transcribe", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "YAML config file (engines, add-ons)")
	decoders := fs.Int("decoders", 0, "PocketSphinx decoders (default: CPUs)")
	reqPath := fs.String("request", "", "JSON `file` with the request's options (a /v2/pre-recorded body without audio_url; - for stdin)")
	var sets setFlags
	fs.Var(&sets, "set", "`key.path=value`: set any config key (repeatable)")
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
	body, err := requestBody(*reqPath, path)
	if err != nil {
		return err
	}
	cfg, err := loadConfig(*cfgPath, os.Environ(), func(c *app.Config) error {
		if *decoders != 0 {
			c.Sphinx.Decoders = *decoders
		}
		return sets.apply(c)
	})
	if err != nil {
		return err
	}
	// The daemon's pipeline without a store or a server: the same
	// engines, routing and add-ons, and the same request decoding.
	tr, err := pipeline.New(cfg.Pipeline(), recognizer.NewCPU(cfg.Sphinx.LiveDecodes), newLogger(stderr, cfg.LogLevel))
	if err != nil {
		return err
	}
	defer tr.Close()
	p, err := params.DecodePreRecorded(body, tr.Capabilities())
	if err != nil {
		return fmt.Errorf("transcribe: request: %w", err)
	}
	res, _, err := tr.TranscribeFile(ctx, path, p)
	if err != nil {
		return fmt.Errorf("transcribe %s: %w", path, err)
	}
	notes := res.PostSessionMetadata
	// Say which acoustic model ran (also in post_session_metadata).
	if m, ok := notes["acoustic_model"]; ok {
		fmt.Fprintf(stderr, "transcribe: acoustic model %v, audio band %v\n", m, notes["audio_band"])
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Result              *pipeline.Result `json:"result"`
		RequestParams       any              `json:"request_params"`
		PostSessionMetadata map[string]any   `json:"post_session_metadata"`
	}{res, p, notes})
}

// requestBody reads the --request file (none: {}) and adds audio_url naming
// the local file; a request that names its own audio_url is refused.
func requestBody(reqPath, audio string) ([]byte, error) {
	req, err := readRequest(reqPath)
	if err != nil {
		return nil, fmt.Errorf("transcribe: %w", err)
	}
	if _, ok := req["audio_url"]; ok {
		return nil, errors.New("transcribe: --request must not carry audio_url: the audio is FILE")
	}
	// A well-formed URL that is never fetched: the pipeline reads FILE.
	u, err := json.Marshal("https://localhost/transcribe/" + url.PathEscape(filepath.Base(audio)))
	if err != nil {
		return nil, err
	}
	req["audio_url"] = u
	return json.Marshal(req)
}
