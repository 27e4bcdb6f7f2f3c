package sphinx

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/config"
	"github.com/earshot-dev/earshot/recognizer"
)

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
		{"too many live decoders", func(c *Config) { c.LiveDecoders = 65 }, []string{"live_decoders"}},
		{"telephone language weight", func(c *Config) { c.TelephoneLanguageWeight = 0.5 }, []string{"telephone_language_weight"}},
		{"live search", func(c *Config) { c.LiveLanguageWeight, c.LiveMaxHMMsPerFrame, c.LiveTopN = 30, 100, 16 }, nil},
		{"live topn out of range", func(c *Config) { c.LiveTopN = 17 }, []string{"live_topn"}},
		{"negative live topn", func(c *Config) { c.LiveTopN = -1 }, []string{"live_topn"}},
		{"live search out of range", func(c *Config) { c.LiveLanguageWeight, c.LiveMaxHMMsPerFrame = 31, 99 }, []string{"live_language_weight", "live_max_hmms_per_frame"}},
		{"negative live search", func(c *Config) { c.LiveLanguageWeight, c.LiveMaxHMMsPerFrame = -1, -1 }, []string{"live_language_weight", "live_max_hmms_per_frame"}},
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
	if c.Decoders < 1 || c.Language != "en" || c.HMM != DefaultHMM || c.TelephoneDecoders != min(8*c.Decoders, MaxDecoders) ||
		c.LiveDecoders != min(4*c.Decoders, MaxDecoders) {
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
	if tc.LanguageWeight != DefaultTelephoneLanguageWeight || c.LanguageWeight != 0 {
		t.Errorf("-lw: telephone live pool %g, wideband %g; want %g, 0 (PocketSphinx's 6.5)", tc.LanguageWeight, c.LanguageWeight, DefaultTelephoneLanguageWeight)
	}
	c.TelephoneLanguageWeight = 8
	if tc, _ := c.Telephone(); tc.LanguageWeight != 8 {
		t.Errorf("telephone_language_weight 8: the live pool's -lw is %g", tc.LanguageWeight)
	}
	c.TelephoneLanguageWeight = 0
	// The batch pool: whole recordings, one decoder per CPU, the same
	// model and search settings, first pass and best path (no flat-lexicon
	// pass), PocketSphinx's weights.
	bc, ok := c.TelephoneBatch()
	if !ok || bc.HMM != DefaultHMM || bc.Decoders != c.Decoders || bc.MaxHMMsPerFrame != DefaultTelephoneMaxHMMsPerFrame || !bc.FastSearch ||
		bc.TopN != DefaultTelephoneTopN || bc.Preload != 0 || bc.TelephoneHMM != NoTelephoneHMM || bc.FirstPassOnly || !bc.OnDemand || tc.OnDemand ||
		bc.LanguageWeight != 0 {
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
	caps := func(d *decoder) [2]int { return [2]int{d.configInt("-maxhmmpf"), d.configInt("-maxwpf")} }
	if got := decoderValue(t, cfg, caps); got != [2]int{30000, -1} {
		t.Errorf("defaults: -maxhmmpf, -maxwpf %v; want 30000, -1", got)
	}

	cfg.MaxHMMsPerFrame, cfg.MaxWordsPerFrame = 4000, 12
	if got := strings.Join(searchArgs(cfg), " "); !strings.HasSuffix(got, "-maxhmmpf 4000 -maxwpf 12") {
		t.Errorf("search arguments %q", got)
	}
	if got := decoderValue(t, cfg, caps); got != [2]int{4000, 12} {
		t.Errorf("decoder: -maxhmmpf, -maxwpf %v; want 4000, 12", got)
	}

	cfg.Decoders = 1
	decodesClearClip(t, cfg)

	// The telephone live pool's language weight reaches its decoders.
	cfg.MaxHMMsPerFrame, cfg.MaxWordsPerFrame = 0, 0
	cfg.TelephoneHMM = DefaultHMM
	tc, _ := cfg.Telephone()
	if lw := decoderValue(t, tc, (*decoder).lw); lw != DefaultTelephoneLanguageWeight {
		t.Errorf("telephone live decoder: -lw %g, want %g", lw, DefaultTelephoneLanguageWeight)
	}

	// The wideband live pool's language weight, the default or the
	// setting, reaches its decoders, and not the wideband pool's.
	cfg.TelephoneHMM = NoTelephoneHMM
	set := cfg
	set.LiveLanguageWeight = 7.25
	checkPools(t, "-lw", (*decoder).lw, []poolCase[float64]{
		{"live", cfg.Live(), 6.5}, {"live with the setting", set.Live(), 7.25}, {"wideband", set, 6.5}})
}

// TestLiveTopN: the wideband live pool's -topn, DefaultLiveTopN, the
// setting or TopN's, reaches its decoders, and not the wideband pool's
// (PocketSphinx's 4 unless TopN is set).
func TestLiveTopN(t *testing.T) {
	var cfg Config
	cfg.TelephoneHMM = NoTelephoneHMM
	cfg.SetDefaults()
	set := cfg
	set.LiveTopN = 3
	all := cfg
	all.TopN = 5
	checkPools(t, "-topn", func(d *decoder) int { return d.configInt("-topn") }, []poolCase[int]{
		{"live", cfg.Live(), DefaultLiveTopN}, {"live with the setting", set.Live(), 3}, {"wideband", set, 4},
		{"live with topn", all.Live(), 5}, {"wideband with topn", all, 5}})
}

// poolCase is a pool's config and the value a setting must have in its
// decoders.
type poolCase[T comparable] struct {
	pool string
	cfg  Config
	want T
}

// checkPools reads setting with read from a decoder of each case's config.
func checkPools[T comparable](t *testing.T, setting string, read func(*decoder) T, cases []poolCase[T]) {
	t.Helper()
	for _, c := range cases {
		if got := decoderValue(t, c.cfg, read); got != c.want {
			t.Errorf("%s decoder: %s %v, want %v", c.pool, setting, got, c.want)
		}
	}
}

// decoderValue makes a decoder of cfg and returns what read takes of it.
func decoderValue[T any](t *testing.T, cfg Config, read func(*decoder) T) T {
	t.Helper()
	d, err := newDecoder(cfg, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	defer d.free()
	return read(d)
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
	e, err := New(cfg, recognizer.NewCPU(cfg.LiveDecodes), nil)
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
