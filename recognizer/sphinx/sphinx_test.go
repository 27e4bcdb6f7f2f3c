package sphinx

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/config"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// newEngine loads an engine with n decoders and closes it at cleanup.
func newEngine(t *testing.T, n int) *Engine {
	t.Helper()
	cfg := Config{Decoders: n}
	cfg.SetDefaults()
	e, err := New(cfg, nil)
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

// checkUtterance asserts the invariants every utterance must keep.
func checkUtterance(t *testing.T, u recognizer.Utterance, audioSeconds float64) {
	t.Helper()
	if len(u.Words) == 0 {
		t.Fatal("no words")
	}
	var texts []string
	var sum float64
	prevEnd := 0.0
	for i, w := range u.Words {
		texts = append(texts, w.Word)
		sum += w.Confidence
		if w.Start < prevEnd-1e-9 || w.End < w.Start || w.End > audioSeconds+1e-9 {
			t.Errorf("word %d %q [%.2f, %.2f] not monotonic inside [0, %.2f] (previous end %.2f)",
				i, w.Word, w.Start, w.End, audioSeconds, prevEnd)
		}
		if w.Confidence < 0 || w.Confidence > 1 || math.IsNaN(w.Confidence) {
			t.Errorf("word %d %q confidence %v not in 0..1", i, w.Word, w.Confidence)
		}
		if strings.ContainsAny(w.Word, "<>[]()+") {
			t.Errorf("word %d %q is a filler or has a pronunciation suffix", i, w.Word)
		}
		prevEnd = w.End
	}
	if got := strings.Join(texts, " "); u.Text != got {
		t.Errorf("Text %q, words say %q", u.Text, got)
	}
	if want := sum / float64(len(u.Words)); math.Abs(u.Confidence-want) > 1e-9 {
		t.Errorf("utterance confidence %v, mean of words %v", u.Confidence, want)
	}
	if u.Start != u.Words[0].Start || u.End != u.Words[len(u.Words)-1].End {
		t.Errorf("utterance [%.2f, %.2f], words [%.2f, %.2f]", u.Start, u.End, u.Words[0].Start, u.Words[len(u.Words)-1].End)
	}
	if u.Language != "en" {
		t.Errorf("language %q", u.Language)
	}
}

func TestGoForward(t *testing.T) {
	e := newEngine(t, 1)
	c, pcm := clip(t, "pocketsphinx-goforward.wav")
	dur := float64(len(pcm)) / recognizer.SampleRate
	tests := []struct {
		name   string
		decode func(*Stream) (recognizer.Utterance, error)
	}{
		{"incremental", func(st *Stream) (recognizer.Utterance, error) {
			writeChunks(t, st, pcm)
			return st.Finish()
		}},
		{"whole", func(st *Stream) (recognizer.Utterance, error) { return st.Decode(pcm) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := openStream(t, e)
			u, err := tt.decode(st)
			if err != nil {
				t.Fatal(err)
			}
			if u.Text != c.Transcript {
				t.Fatalf("got %q, want %q", u.Text, c.Transcript)
			}
			checkUtterance(t, u, dur)
			// "go" starts after the leading silence, "meters" ends before
			// the trailing one (the clip has ~0.45 s before and after).
			if u.Start < 0.2 || u.End > dur-0.2 {
				t.Errorf("speech [%.2f, %.2f] of %.2f s audio does not leave the silences out", u.Start, u.End, dur)
			}
		})
	}
}

// TestWordTimesShift checks times follow the audio: the same clip after
// 2 s of silence has its words 2 s later (PocketSphinx's own silence
// removal would compress them).
func TestWordTimesShift(t *testing.T) {
	e := newEngine(t, 1)
	_, pcm := clip(t, "pocketsphinx-goforward.wav")
	st := openStream(t, e)
	a, err := st.Decode(pcm)
	if err != nil {
		t.Fatal(err)
	}
	padded := append(make([]int16, 2*recognizer.SampleRate), pcm...)
	writeChunks(t, st, padded)
	b, err := st.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Words) != len(b.Words) {
		t.Fatalf("%q vs %q", a.Text, b.Text)
	}
	for i := range a.Words {
		if d := b.Words[i].Start - a.Words[i].Start; math.Abs(d-2) > 0.05 {
			t.Errorf("word %q moved %.2f s, want 2", a.Words[i].Word, d)
		}
	}
}

// TestUtterancesRestart checks a stream decodes several utterances, each
// with times from 0, and that Partial sees words before Finish.
func TestUtterancesRestart(t *testing.T) {
	e := newEngine(t, 1)
	c, pcm := clip(t, "pocketsphinx-goforward.wav")
	st := openStream(t, e)
	if _, ok := st.Partial(); ok {
		t.Error("partial before any audio")
	}
	var first recognizer.Utterance
	for i := range 3 {
		writeChunks(t, st, pcm[:len(pcm)*3/4])
		h, ok := st.Partial()
		if !ok || !strings.HasPrefix(c.Transcript, strings.Fields(h.Text)[0]) {
			t.Errorf("utterance %d: partial %q, %v", i, h.Text, ok)
		}
		writeChunks(t, st, pcm[len(pcm)*3/4:])
		u, err := st.Finish()
		if err != nil {
			t.Fatal(err)
		}
		if u.Text != c.Transcript {
			t.Errorf("utterance %d: %q", i, u.Text)
		}
		if i == 0 {
			first = u
			continue
		}
		if math.Abs(u.Start-first.Start) > 0.05 || math.Abs(u.End-first.End) > 0.05 {
			t.Errorf("utterance %d at [%.2f, %.2f], first at [%.2f, %.2f]", i, u.Start, u.End, first.Start, first.End)
		}
	}
	u, err := st.Finish()
	if err != nil || len(u.Words) != 0 {
		t.Errorf("Finish without audio: %+v, %v", u, err)
	}
}

// TestLibriSpeechWER bounds accuracy on a read-speech clip. Measured on
// 2026-11-21 with Debian's 0.8+5prealpha en-us model: whole 3/30 errors
// (0.100, the same as pocketsphinx_batch), incremental 5/30 (0.167); the
// bounds add about two words of margin.
func TestLibriSpeechWER(t *testing.T) {
	e := newEngine(t, 2)
	c, pcm := clip(t, "ls-test-clean-1995-1837-0001.wav")
	dur := float64(len(pcm)) / recognizer.SampleRate
	tests := []struct {
		name   string
		maxWER float64
		decode func(*Stream) (recognizer.Utterance, error)
	}{
		{"whole", 0.17, func(st *Stream) (recognizer.Utterance, error) { return st.Decode(pcm) }},
		{"incremental", 0.24, func(st *Stream) (recognizer.Utterance, error) {
			writeChunks(t, st, pcm)
			return st.Finish()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st := openStream(t, e)
			u, err := tt.decode(st)
			if err != nil {
				t.Fatal(err)
			}
			checkUtterance(t, u, dur)
			wer := recognizertest.WER(c.Transcript, u.Text)
			t.Logf("WER %.3f: %q", wer, u.Text)
			if wer > tt.maxWER {
				t.Errorf("WER %.3f > %.3f", wer, tt.maxWER)
			}
		})
	}
}

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

func TestConfig(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	tests := []struct {
		name    string
		mod     func(*Config)
		wantErr []string
	}{
		{"defaults", func(*Config) {}, nil},
		{"missing files", func(c *Config) { c.HMM, c.Dict, c.LM = missing, missing, missing }, []string{"hmm", "dict", "lm"}},
		{"hmm not a dir", func(c *Config) { c.HMM = DefaultDict }, []string{"hmm"}},
		{"dict is dir", func(c *Config) { c.Dict = DefaultHMM }, []string{"dict"}},
		{"too many decoders", func(c *Config) { c.Decoders = 65 }, []string{"decoders"}},
		{"live decodes below -1", func(c *Config) { c.LiveDecodes = -2 }, []string{"live_decodes"}},
		{"too many live decodes", func(c *Config) { c.LiveDecodes = 257 }, []string{"live_decodes"}},
		{"negative decoders", func(c *Config) { c.Decoders = -1 }, []string{"decoders"}},
		{"missing telephone model", func(c *Config) { c.TelephoneHMM = missing }, []string{"telephone_hmm"}},
		{"telephone model off", func(c *Config) { c.TelephoneHMM = NoTelephoneHMM }, nil},
		{"too many telephone decoders", func(c *Config) { c.TelephoneDecoders = 65 }, []string{"telephone_decoders"}},
		{"search settings", func(c *Config) {
			c.FrameDownsample, c.TopN, c.PhoneLookahead, c.Beam, c.WordBeam, c.PhoneBeam = 4, 16, new(0), 1e-80, 1e-5, 1e-40
		}, nil},
		{"search settings out of range", func(c *Config) {
			c.FrameDownsample, c.TopN, c.PhoneLookahead, c.Beam, c.WordBeam, c.PhoneBeam = 5, 17, new(21), 1e-81, 0.5, -1
		}, []string{"frame_downsample", "topn", "phone_lookahead", "beam", "word_beam", "phone_beam"}},
		{"NaN beam", func(c *Config) { c.Beam = math.NaN() }, []string{"beam"}},
		{"search caps", func(c *Config) { c.MaxHMMsPerFrame, c.MaxWordsPerFrame = 100, 1000 }, nil},
		{"search caps out of range", func(c *Config) { c.MaxHMMsPerFrame, c.MaxWordsPerFrame = 99, 1001 }, []string{"max_hmms_per_frame", "max_words_per_frame"}},
		{"negative search caps", func(c *Config) { c.MaxHMMsPerFrame, c.MaxWordsPerFrame = -1, -1 }, []string{"max_hmms_per_frame", "max_words_per_frame"}},
	}
	for _, name := range PresetNames() {
		tests = append(tests, struct {
			name    string
			mod     func(*Config)
			wantErr []string
		}{"preset " + name, func(c *Config) {
			if err := c.ApplyPreset(name); err != nil {
				t.Fatal(err)
			}
		}, nil})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Config
			c.SetDefaults()
			tt.mod(&c)
			err := c.Validate()
			if (err != nil) != (len(tt.wantErr) > 0) {
				t.Fatalf("Validate: %v", err)
			}
			var keys []string
			for _, p := range config.Problems(err) {
				keys = append(keys, p.Key)
			}
			for _, key := range tt.wantErr {
				if !slices.Contains(keys, key) {
					t.Errorf("error %q does not name %s", err, key)
				}
			}
		})
	}
	var c Config
	c.SetDefaults()
	if c.Decoders < 1 || c.Language != "en" || c.HMM != DefaultHMM || c.TelephoneDecoders != min(4*c.Decoders, MaxDecoders) {
		t.Errorf("defaults %+v", c)
	}
}

// TestTelephoneConfig: the telephone pool's config is the engine's with
// the telephone model and pool size; "none" has none; the default is the
// installed model when there is one.
func TestTelephoneConfig(t *testing.T) {
	var c Config
	c.Decoders = 3
	c.SetDefaults()
	c.TelephoneHMM, c.TelephoneDecoders = DefaultHMM, 2
	tc, ok := c.Telephone()
	if !ok || tc.HMM != DefaultHMM || tc.Decoders != 2 || tc.LM != c.LM || tc.TelephoneHMM != NoTelephoneHMM {
		t.Errorf("Telephone() = %+v, %v", tc, ok)
	}
	if tc.MaxHMMsPerFrame != DefaultTelephoneMaxHMMsPerFrame || c.MaxHMMsPerFrame != 0 {
		t.Errorf("-maxhmmpf: telephone pool %d, wideband %d; want %d, 0 (PocketSphinx's)", tc.MaxHMMsPerFrame, c.MaxHMMsPerFrame, DefaultTelephoneMaxHMMsPerFrame)
	}
	if !tc.FirstPassOnly || c.FirstPassOnly {
		t.Errorf("first pass only: telephone live pool %v, wideband %v; want true, false", tc.FirstPassOnly, c.FirstPassOnly)
	}
	if tc.TopN != DefaultTelephoneTopN || c.TopN != 0 {
		t.Errorf("-topn: telephone pool %d, wideband %d; want %d, 0 (PocketSphinx's 4)", tc.TopN, c.TopN, DefaultTelephoneTopN)
	}
	// The batch pool: whole recordings, one decoder per CPU, the same
	// model and search settings, all passes.
	bc, ok := c.TelephoneBatch()
	if !ok || bc.HMM != DefaultHMM || bc.Decoders != c.Decoders || bc.MaxHMMsPerFrame != DefaultTelephoneMaxHMMsPerFrame ||
		bc.TopN != DefaultTelephoneTopN || bc.Preload != 0 || bc.TelephoneHMM != NoTelephoneHMM || bc.FirstPassOnly {
		t.Errorf("TelephoneBatch() = %+v, %v", bc, ok)
	}
	if err := bc.Validate(); err != nil {
		t.Errorf("the telephone batch pool's config does not validate: %v", err)
	}
	c.MaxHMMsPerFrame, c.TopN = 30000, 3
	if tc, _ := c.Telephone(); tc.MaxHMMsPerFrame != 30000 || tc.TopN != 3 {
		t.Errorf("set max_hmms_per_frame and topn: telephone pool %d, %d, want 30000, 3", tc.MaxHMMsPerFrame, tc.TopN)
	}
	if bc, _ := c.TelephoneBatch(); bc.MaxHMMsPerFrame != 30000 || bc.TopN != 3 {
		t.Errorf("set max_hmms_per_frame and topn: telephone batch pool %d, %d, want 30000, 3", bc.MaxHMMsPerFrame, bc.TopN)
	}
	c.MaxHMMsPerFrame, c.TopN = 0, 0
	if err := tc.Validate(); err != nil {
		t.Errorf("the telephone pool's config does not validate: %v", err)
	}
	if _, ok := tc.Telephone(); ok {
		t.Error("the telephone pool has a telephone pool of its own")
	}
	c.TelephoneHMM = NoTelephoneHMM
	if _, ok := c.Telephone(); ok {
		t.Error("none: still a telephone pool")
	}
	if _, ok := c.TelephoneBatch(); ok {
		t.Error("none: still a telephone batch pool")
	}
	c.TelephoneHMM = ""
	_, installed := os.Stat(DefaultTelephoneHMM)
	if tc, ok := c.Telephone(); ok != (installed == nil) || ok && tc.HMM != DefaultTelephoneHMM {
		t.Errorf("default: %+v, %v (installed: %v)", tc, ok, installed)
	}
}

// TestNewBadModel checks New fails cleanly on a model PocketSphinx cannot
// load (an empty acoustic model directory).
func TestNewBadModel(t *testing.T) {
	cfg := Config{Decoders: 2, HMM: t.TempDir()}
	cfg.SetDefaults()
	_, err := New(cfg, nil)
	if !errors.Is(err, ErrInit) {
		t.Fatalf("New with an empty model directory: %v, want ErrInit", err)
	}
}

func TestWordText(t *testing.T) {
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{"hello", "hello", true},
		{"read(2)", "read", true},
		{"i'm", "i'm", true},
		{"<s>", "", false},
		{"</s>", "", false},
		{"<sil>", "", false},
		{"[NOISE]", "", false},
		{"++GARBAGE++", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		got, ok := wordText(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("wordText(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
	if got := strings.Join(cleanHyp("<s> go(2) [NOISE] forward </s>"), " "); got != "go forward" {
		t.Errorf("cleanHyp: %q", got)
	}
}

// TestSetCMNFrom checks that an incremental decode primed with the mean
// cepstrum of the utterance's own audio gives what a one-pass Decode
// (normalised over the whole utterance, as pocketsphinx_batch does) gives:
// the same words and times. The clips are under 3 s, the window in which
// PocketSphinx's live normalisation keeps the primed mean unchanged.
func TestSetCMNFrom(t *testing.T) {
	e := newEngine(t, 1)
	for _, name := range []string{"pocketsphinx-goforward.wav", "ls-test-clean-1089-134691-0000.wav"} {
		t.Run(name, func(t *testing.T) {
			_, pcm := clip(t, name)
			st := openStream(t, e)
			whole, err := st.Decode(pcm)
			if err != nil {
				t.Fatal(err)
			}
			st.SetCMNFrom(pcm)
			writeChunks(t, st, pcm)
			primed, err := st.Finish()
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("one pass %q, primed incremental %q", whole.Text, primed.Text)
			if primed.Text != whole.Text || len(primed.Words) != len(whole.Words) {
				t.Fatalf("primed incremental %q, one pass %q", primed.Text, whole.Text)
			}
			for i, w := range primed.Words {
				if w.Start != whole.Words[i].Start || w.End != whole.Words[i].End {
					t.Errorf("word %d %+v, one pass %+v", i, w, whole.Words[i])
				}
			}
		})
	}
}

// TestFirstPassPath: a first-pass-only stream reports the words of its
// open utterance (Path) as they come, with times inside the audio and
// confidences in 0..1; its decoder goes back to the full search, so the
// next stream on it decodes with all passes (posterior confidences).
func TestFirstPassPath(t *testing.T) {
	e := newEngine(t, 1)
	c, pcm := clip(t, "pocketsphinx-goforward.wav")
	st := openStream(t, e)
	st.FirstPassOnly()
	if p := st.Path(); p != nil {
		t.Errorf("Path before any audio: %+v", p)
	}
	half := len(pcm) / 2
	writeChunks(t, st, pcm[:half])
	early := st.Path()
	writeChunks(t, st, pcm[half:])
	words := st.Path()
	var texts []string
	for _, w := range words {
		texts = append(texts, w.Word)
		if w.Start < 0 || w.End < w.Start || w.End > float64(len(pcm))/recognizer.SampleRate || w.Confidence < 0 || w.Confidence > 1 {
			t.Errorf("word %+v", w)
		}
	}
	if got := strings.Join(texts, " "); got != c.Transcript {
		t.Errorf("path %q, want %q", got, c.Transcript)
	}
	if len(early) == 0 || len(early) >= len(words) {
		t.Errorf("path at half the audio has %d words, at the end %d", len(early), len(words))
	}
	st.Close()

	st = openStream(t, e)
	u, err := st.Decode(pcm)
	if err != nil || u.Text != c.Transcript {
		t.Fatalf("next stream: %q, %v", u.Text, err)
	}
}

// TestFirstPassThenFullSearch: after a stream on the first-pass-only
// search, the next stream on the same decoder decodes incrementally with
// the full search again. Making the first-pass search had set the shared
// acoustic model up for a one-pass search (no frames kept for the second
// pass), so the next incremental utterance failed to end ("end utterance")
// and a live session with a long endpointing got no finals.
func TestFirstPassThenFullSearch(t *testing.T) {
	e := newEngine(t, 1)
	c, pcm := clip(t, "pocketsphinx-goforward.wav")
	st := openStream(t, e)
	st.FirstPassOnly()
	writeChunks(t, st, pcm)
	if len(st.Path()) == 0 {
		t.Fatal("no first-pass path")
	}
	st.Close()
	st = openStream(t, e)
	writeChunks(t, st, pcm)
	u, err := st.Finish()
	if err != nil || u.Text != c.Transcript {
		t.Fatalf("next stream: %q, %v", u.Text, err)
	}
}

// TestSearchSettings: a pool with the cheapest preset's settings (no
// second pass, every other frame scored, narrower beams) loads and still
// decodes the clear clip.
func TestSearchSettings(t *testing.T) {
	var cfg Config
	if err := cfg.ApplyPreset("fast-ds2-beams"); err != nil {
		t.Fatal(err)
	}
	cfg.Decoders = 1
	cfg.SetDefaults()
	if got := strings.Join(searchArgs(cfg), " "); got != "-fwdflat no -ds 2 -beam 1e-40 -wbeam 1e-24 -pbeam 1e-40" {
		t.Errorf("search arguments %q", got)
	}
	decodesClearClip(t, cfg)
}

// TestSearchCaps: max_hmms_per_frame and max_words_per_frame reach the
// decoder's configuration as -maxhmmpf and -maxwpf (its searches, the
// first-pass-only one included, are made from it), zero keeps
// PocketSphinx's defaults, and a capped decoder still decodes the clear
// clip.
func TestSearchCaps(t *testing.T) {
	var cfg Config
	cfg.SetDefaults()
	d, err := newDecoder(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hmm, wpf := d.configInt("-maxhmmpf"), d.configInt("-maxwpf")
	d.free()
	if hmm != 30000 || wpf != -1 {
		t.Errorf("defaults: -maxhmmpf %d, -maxwpf %d; want 30000, -1", hmm, wpf)
	}

	cfg.MaxHMMsPerFrame, cfg.MaxWordsPerFrame = 4000, 12
	if got := strings.Join(searchArgs(cfg), " "); !strings.HasSuffix(got, "-maxhmmpf 4000 -maxwpf 12") {
		t.Errorf("search arguments %q", got)
	}
	d, err = newDecoder(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hmm, wpf = d.configInt("-maxhmmpf"), d.configInt("-maxwpf")
	d.free()
	if hmm != 4000 || wpf != 12 {
		t.Errorf("decoder: -maxhmmpf %d, -maxwpf %d; want 4000, 12", hmm, wpf)
	}

	cfg.Decoders = 1
	decodesClearClip(t, cfg)
}

// TestPresetSettings: a preset's search caps come out as the YAML keys a
// daemon's --set takes.
func TestPresetSettings(t *testing.T) {
	got, err := PresetSettings("hmm5k-wpf10")
	if err != nil || strings.Join(got, " ") != "max_hmms_per_frame=5000 max_words_per_frame=10" {
		t.Errorf("PresetSettings: %q, %v", got, err)
	}
	if _, err := PresetSettings("no-such"); err == nil {
		t.Error("unknown preset accepted")
	}
}

// decodesClearClip checks that an engine made from cfg decodes the clear
// clip to its transcript.
func decodesClearClip(t *testing.T, cfg Config) {
	t.Helper()
	e, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	c, pcm := clip(t, "pocketsphinx-goforward.wav")
	st, err := e.NewStream(t.Context(), recognizer.StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	u, err := st.(*Stream).Decode(pcm)
	if err != nil || u.Text != c.Transcript {
		t.Errorf("decoded %q, %v; want %q", u.Text, err, c.Transcript)
	}
}
