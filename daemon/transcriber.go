package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer/sphinx"
)

// pipeline is what New and NewLocalTranscriber both load from cfg: the
// embedded engine, its telephone-band pool, the engine registry and the
// add-ons, wired into one Transcriber.
type pipeline struct {
	tr       *Transcriber
	embedded *sphinx.Engine
	tel      *sphinx.Engine // the telephone-band pool, nil when none
}

// newPipeline loads the pipeline of cfg; on error it releases what it had
// loaded.
func newPipeline(cfg Config, logger *slog.Logger) (*pipeline, error) {
	eng, err := sphinx.New(cfg.Sphinx, logger.With("component", "recognizer"))
	if err != nil {
		return nil, fmt.Errorf("load engine: %w", err)
	}
	tel, err := sphinx.NewTelephone(cfg.Sphinx, logger.With("component", "recognizer", "model", "telephone"))
	if err != nil {
		eng.Close()
		return nil, fmt.Errorf("load engine: %w", err)
	}
	engines, err := NewEngines(eng, cfg.Engines, logger.With("component", "recognizer"))
	if err != nil {
		tel.Close()
		eng.Close()
		return nil, fmt.Errorf("load engines: %w", err)
	}
	if tel != nil {
		engines.SetTelephone(tel)
	}
	addons, err := NewAddons(cfg.Addons, logger.With("component", "addons"))
	if err != nil {
		engines.Close()
		tel.Close()
		eng.Close()
		return nil, fmt.Errorf("wire add-ons: %w", err)
	}
	return &pipeline{
		tr: &Transcriber{Engine: eng, Engines: engines, Addons: addons, Media: media.Options{
			FFmpeg: cfg.FFmpeg, MaxDuration: cfg.Limits.MaxAudioDuration,
		}},
		embedded: eng,
		tel:      tel,
	}, nil
}

// Close releases the engines and the add-ons.
func (p *pipeline) Close() error {
	return errors.Join(p.tr.Engines.Close(), p.embedded.Close(), p.tel.Close(), p.tr.Addons.Close())
}

// LocalTranscriber is the daemon's pre-recorded pipeline without a store or
// a server (`earshotd transcribe`): the same engines, routing and add-ons a
// daemon with cfg runs, and the same request decoding.
type LocalTranscriber struct {
	*pipeline
	caps params.Capabilities
}

// NewLocalTranscriber loads the engines and add-ons of cfg (after
// SetDefaults and Validate) as New does. Close releases them.
func NewLocalTranscriber(cfg Config, logger *slog.Logger) (*LocalTranscriber, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	p, err := newPipeline(cfg, logger)
	if err != nil {
		return nil, err
	}
	return &LocalTranscriber{pipeline: p, caps: params.Capabilities{Languages: p.tr.Engines.Languages()}}, nil
}

// Decode decodes a pre-recorded request body (SPEC 2.4) as POST
// /v2/pre-recorded does: a *params.ValidationError (400) or an error
// wrapping params.ErrCannotServe (422) when the daemon would refuse it.
func (l *LocalTranscriber) Decode(body []byte) (*params.PreRecorded, error) {
	return params.DecodePreRecorded(body, l.caps)
}

// TranscribeFile runs the pipeline on the file at path with p, as a worker
// runs a job; the result's post_session_metadata notes (engine used, add-on
// notes) come with it.
func (l *LocalTranscriber) TranscribeFile(ctx context.Context, path string, p *params.PreRecorded) (*Result, map[string]any, error) {
	res, _, err := l.tr.TranscribeFile(ctx, path, p)
	if err != nil {
		return nil, nil, err
	}
	return res, res.PostSessionMetadata, nil
}
