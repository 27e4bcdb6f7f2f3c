package pipeline

import (
	"context"
	"sync"

	"github.com/earshot-dev/earshot/recognizer"
)

// languageKeeper is the engine of a live session that detects its
// language without code switching (SPEC 2.6: "detected on first utterance
// and kept"): streams detect until a final utterance comes back with a
// language; every stream opened after that decodes in it. With
// code_switching the session uses the engine itself and each utterance is
// detected on its own.
type languageKeeper struct {
	recognizer.Engine

	mu   sync.Mutex
	lang string // guarded by mu: the kept language, "" until detected
}

// keepLanguage wraps e for a session without code switching.
func keepLanguage(e recognizer.Engine) *languageKeeper { return &languageKeeper{Engine: e} }

func (k *languageKeeper) kept() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.lang
}

func (k *languageKeeper) keep(lang string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.lang == "" {
		k.lang = lang
	}
}

// NewStream opens a stream in the kept language once there is one.
func (k *languageKeeper) NewStream(ctx context.Context, o recognizer.StreamOptions) (recognizer.Stream, error) {
	if o.Language == "" {
		o.Language = k.kept()
	}
	st, err := k.Engine.NewStream(ctx, o)
	if err != nil {
		return nil, err
	}
	return &keptStream{Stream: st, k: k}, nil
}

// keptStream reports the language of its first final to its keeper.
type keptStream struct {
	recognizer.Stream
	k *languageKeeper
}

func (s *keptStream) Finish() (recognizer.Utterance, error) {
	u, err := s.Stream.Finish()
	if err == nil && len(u.Words) > 0 {
		s.k.keep(u.Language)
	}
	return u, err
}

// Decode is Finish for a whole utterance (one-pass finals).
func (s *keptStream) Decode(pcm []int16) (recognizer.Utterance, error) {
	u, err := decodeOnce(s.Stream, pcm)
	if err == nil && len(u.Words) > 0 {
		s.k.keep(u.Language)
	}
	return u, err
}
