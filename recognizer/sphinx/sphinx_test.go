package sphinx

import (
	"testing"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// newEngine loads an engine with n decoders and closes it at cleanup.
func newEngine(t *testing.T, n int) *Engine {
	t.Helper()
	cfg := Config{Decoders: n}
	cfg.SetDefaults()
	e, err := New(cfg, recognizer.NewCPU(cfg.LiveDecodes), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func openStream(t *testing.T, e *Engine) *Stream {
	t.Helper()
	st, err := e.NewStream(t.Context(), recognizer.StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st.(*Stream)
}

func clip(t *testing.T, name string) (recognizertest.Clip, []int16) {
	t.Helper()
	for _, c := range recognizertest.Manifest(t) {
		if c.File == name {
			return c, recognizertest.ReadWAV16(t, c.Path)[0]
		}
	}
	t.Fatalf("clip %s not in manifest", name)
	return recognizertest.Clip{}, nil
}

// writeChunks feeds pcm in 100 ms pieces, as a live pipeline would.
func writeChunks(t *testing.T, st *Stream, pcm []int16) {
	t.Helper()
	for i := 0; i < len(pcm); i += 1600 {
		if err := st.Write(pcm[i:min(i+1600, len(pcm))]); err != nil {
			t.Fatal(err)
		}
	}
}
