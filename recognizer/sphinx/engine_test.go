package sphinx

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/recognizer"
)

// TestResultIndependentOfDecoder checks a decoder's history (another
// stream's incremental utterances) does not change what the next stream
// gets from it.
func TestResultIndependentOfDecoder(t *testing.T) {
	e := newEngine(t, 1)
	_, pcm := clip(t, "ls-test-clean-1089-134691-0001.wav")
	_, other := clip(t, "ljspeech-LJ001-0002.wav")
	decode := func() recognizer.Utterance {
		st := openStream(t, e)
		defer st.Close()
		writeChunks(t, st, pcm)
		u, err := st.Finish()
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	a := decode()
	st := openStream(t, e)
	writeChunks(t, st, other)
	if _, err := st.Finish(); err != nil {
		t.Fatal(err)
	}
	writeChunks(t, st, other[:len(other)/2]) // left unfinished
	st.Close()
	if b := decode(); a.Text != b.Text || a.Confidence != b.Confidence {
		t.Errorf("first %q (%.3f), after other use %q (%.3f)", a.Text, a.Confidence, b.Text, b.Confidence)
	}
}

func TestPoolCapacity(t *testing.T) {
	e := newEngine(t, 2)
	a := openStream(t, e)
	openStream(t, e)
	if total, busy := e.Stats(); total != 2 || busy != 2 {
		t.Fatalf("stats %d/%d, want 2/2", total, busy)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	_, err := e.NewStream(ctx, recognizer.StreamOptions{})
	if !errors.Is(err, recognizer.ErrAtCapacity) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("third stream: %v, want ErrAtCapacity and DeadlineExceeded", err)
	}

	// A waiter gets the decoder a closing stream returns.
	got := make(chan error, 1)
	go func() {
		st, err := e.NewStream(t.Context(), recognizer.StreamOptions{})
		if err == nil {
			st.Close()
		}
		got <- err
	}()
	a.Close()
	if err := <-got; err != nil {
		t.Fatalf("waiter: %v", err)
	}
	if err := a.Close(); err != nil {
		t.Errorf("second stream Close: %v", err)
	}
	if total, busy := e.Stats(); total != 2 || busy != 1 {
		t.Errorf("stats %d/%d, want 2/1", total, busy)
	}
}

// TestOnDemandPool: an OnDemand pool starts empty, loads a decoder for
// a stream that finds none idle, keeps it for the next stream, and loads
// no more than its size.
func TestOnDemandPool(t *testing.T) {
	cfg := Config{Decoders: 2, OnDemand: true}
	cfg.SetDefaults()
	e, err := New(cfg, recognizer.NewCPU(cfg.LiveDecodes), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if total, busy := e.Stats(); total != 0 || busy != 0 || e.Loading() != 0 || !e.Ready() {
		t.Fatalf("new pool: stats %d/%d, loading %d, ready %v; want 0/0, 0, ready (e2e TestOpsListener: /readyz)", total, busy, e.Loading(), e.Ready())
	}
	c, pcm := clip(t, "pocketsphinx-goforward.wav")
	for range 2 {
		st := openStream(t, e)
		if total, busy := e.Stats(); total != 1 || busy != 1 {
			t.Errorf("one stream: stats %d/%d, want 1/1", total, busy)
		}
		if u, err := st.Decode(pcm); err != nil || u.Text != c.Transcript {
			t.Errorf("decoded %q, %v; want %q", u.Text, err, c.Transcript)
		}
		st.Close()
	}
	openStream(t, e)
	openStream(t, e)
	if total, busy := e.Stats(); total != 2 || busy != 2 {
		t.Errorf("two streams: stats %d/%d, want 2/2", total, busy)
	}
}

// TestLoadOnDemandPool: a live pool with LoadOnDemand loads nothing at
// New and nothing in the background; each stream that finds no idle
// decoder loads its own, which stays in the pool, up to the pool's size.
// Before LoadOnDemand the rest loaded in the background right after New
// (Loading 2 here); until 2026-11-30 New still loaded Decoders (1 here).
func TestLoadOnDemandPool(t *testing.T) {
	cfg := Config{Decoders: 1, LiveDecoders: 3, LoadOnDemand: true}
	cfg.SetDefaults()
	e, err := New(cfg.Live(), recognizer.NewCPU(cfg.LiveDecodes), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if total, busy := e.Stats(); total != 0 || busy != 0 || e.Loading() != 0 || !e.Ready() {
		t.Fatalf("new pool: stats %d/%d, loading %d, ready %v; want 0/0, 0, ready (e2e TestOpsListener: /readyz)", total, busy, e.Loading(), e.Ready())
	}
	var streams []recognizer.Stream
	for range 3 {
		streams = append(streams, openStream(t, e))
	}
	if total, busy := e.Stats(); total != 3 || busy != 3 {
		t.Errorf("three streams: stats %d/%d, want 3/3", total, busy)
	}
	for _, st := range streams {
		st.Close()
	}
	if total, busy := e.Stats(); total != 3 || busy != 0 {
		t.Errorf("after the streams: stats %d/%d, want 3/0 (loaded decoders stay)", total, busy)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	for range 3 {
		openStream(t, e)
	}
	if _, err := e.NewStream(ctx, recognizer.StreamOptions{}); !errors.Is(err, recognizer.ErrAtCapacity) {
		t.Errorf("a fourth stream on a pool of 3: %v, want ErrAtCapacity", err)
	}
}

// TestLoadOnDemandWritesNothing: a decoder loaded on demand reads the
// dictionary from the file its pool made at New (dictFile) and writes
// nothing: until 2026-11-30 each load wrote the dictionary to a temporary
// file, and with the temporary directory unusable (here: gone; in e2e
// TestDiskFull: the disk full) the first job on a daemon that loads on
// demand failed.
func TestLoadOnDemandWritesNothing(t *testing.T) {
	cfg := Config{Decoders: 1, LoadOnDemand: true}
	cfg.SetDefaults()
	e, err := New(cfg, recognizer.NewCPU(cfg.LiveDecodes), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "gone"))
	st := openStream(t, e)
	_, pcm := clip(t, "pocketsphinx-goforward.wav")
	if err := st.Write(pcm); err != nil {
		t.Fatal(err)
	}
	u, err := st.Finish()
	if err != nil || u.Text == "" {
		t.Fatalf("decode on a decoder loaded on demand: %q, %v", u.Text, err)
	}
}

func TestLanguage(t *testing.T) {
	e := newEngine(t, 1)
	for _, lang := range []string{"", "en"} {
		st, err := e.NewStream(t.Context(), recognizer.StreamOptions{Language: lang})
		if err != nil {
			t.Fatalf("%q: %v", lang, err)
		}
		st.Close()
	}
	if _, err := e.NewStream(t.Context(), recognizer.StreamOptions{Language: "fr"}); !errors.Is(err, recognizer.ErrLanguage) {
		t.Errorf("fr: %v, want ErrLanguage", err)
	}
	if got := e.Languages(); len(got) != 1 || got[0] != "en" || e.Name() != "sphinx" {
		t.Errorf("languages %v, name %q", got, e.Name())
	}
}

func TestClose(t *testing.T) {
	e := newEngine(t, 2)
	_, pcm := clip(t, "pocketsphinx-goforward.wav")
	held := openStream(t, e)
	blocker := openStream(t, e)

	// A NewStream waiting for a decoder ends with ErrClosed when the
	// engine closes, whether it was already waiting or not.
	var wg sync.WaitGroup
	var waitErr error
	wg.Go(func() { _, waitErr = e.NewStream(context.Background(), recognizer.StreamOptions{}) })
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if !errors.Is(waitErr, recognizer.ErrClosed) {
		t.Errorf("waiting NewStream: %v, want ErrClosed", waitErr)
	}
	if err := e.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := e.NewStream(t.Context(), recognizer.StreamOptions{}); !errors.Is(err, recognizer.ErrClosed) {
		t.Errorf("NewStream after Close: %v", err)
	}
	// Checked-out decoders keep working until their stream closes.
	if total, _ := e.Stats(); total != 2 {
		t.Errorf("total %d after Close with 2 streams open, want 2", total)
	}
	if u, err := held.Decode(pcm); err != nil || u.Text != "go forward ten meters" {
		t.Errorf("stream after engine Close: %q, %v", u.Text, err)
	}
	blocker.Close()
	held.Close()
	if total, busy := e.Stats(); total != 0 || busy != 0 {
		t.Errorf("stats %d/%d after all streams closed, want 0/0", total, busy)
	}
	if err := held.Write(pcm); !errors.Is(err, recognizer.ErrClosed) {
		t.Errorf("Write after Close: %v", err)
	}
	if _, err := held.Finish(); !errors.Is(err, recognizer.ErrClosed) {
		t.Errorf("Finish after Close: %v", err)
	}
	if _, ok := held.Partial(); ok {
		t.Error("Partial after Close")
	}
}

// TestNewBadModel checks New fails cleanly on a model PocketSphinx cannot
// load (an empty acoustic model directory).
func TestNewBadModel(t *testing.T) {
	cfg := Config{Decoders: 2, HMM: t.TempDir()}
	cfg.SetDefaults()
	_, err := New(cfg, recognizer.NewCPU(cfg.LiveDecodes), nil)
	if !errors.Is(err, ErrInit) {
		t.Fatalf("New with an empty model directory: %v, want ErrInit", err)
	}
}
