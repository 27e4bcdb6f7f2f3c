package recognizer

import (
	"errors"

	"github.com/earshot-dev/earshot/errcode"
)

var (
	// ErrAtCapacity is returned by Engine.NewStream when no decoder became
	// free before the caller's context ended.
	ErrAtCapacity = errcode.ErrAtCapacity.Sub("recognizer: no decoder available", "")
	// ErrLanguage is returned by Engine.NewStream for a language the engine
	// does not serve.
	ErrLanguage = errors.New("recognizer: language not installed")
	// ErrClosed is returned by a Stream or Engine used after Close.
	ErrClosed = errors.New("recognizer: closed")
	// ErrNotConfigured is returned by an add-on that has no backend.
	ErrNotConfigured = errors.New("recognizer: not configured")
)
