package sphinx

import (
	"fmt"
	"slices"
	"strings"
)

// A preset is a named set of search settings (Config fields), the rows of
// the CPU/accuracy trade-off that bench/cmd/livegap and livebench measure
// (issue 14 item 5); "default" is Config's defaults.
type preset struct {
	name  string
	apply func(*Config)
}

var presets = []preset{
	{"default", func(*Config) {}},
	{"fast", func(c *Config) { c.FastSearch = true }},
	{"ds2", func(c *Config) { c.FrameDownsample = 2 }},
	{"fast-ds2", func(c *Config) { c.FastSearch, c.FrameDownsample = true, 2 }},
	{"fast-topn2", func(c *Config) { c.FastSearch, c.TopN = true, 2 }},
	{"fast-beams", func(c *Config) { c.FastSearch, c.Beam, c.WordBeam, c.PhoneBeam = true, 1e-40, 1e-24, 1e-40 }},
	{"fast-pl0", func(c *Config) { c.FastSearch, c.PhoneLookahead = true, new(0) }},
	{"fast-ds2-topn2", func(c *Config) { c.FastSearch, c.FrameDownsample, c.TopN = true, 2, 2 }},
	{"fast-ds2-beams", func(c *Config) {
		c.FastSearch, c.FrameDownsample, c.Beam, c.WordBeam, c.PhoneBeam = true, 2, 1e-40, 1e-24, 1e-40
	}},
	{"fast-ds3", func(c *Config) { c.FastSearch, c.FrameDownsample = true, 3 }},
	{"fast-hmm8k", func(c *Config) { c.FastSearch, c.MaxHMMsPerFrame = true, 8000 }},
	{"hmm30k", func(c *Config) { c.MaxHMMsPerFrame = 30000 }},
	{"hmm10k", func(c *Config) { c.MaxHMMsPerFrame = 10000 }},
	{"hmm8k", func(c *Config) { c.MaxHMMsPerFrame = 8000 }},
	{"hmm7k", func(c *Config) { c.MaxHMMsPerFrame = 7000 }},
	{"hmm6k", func(c *Config) { c.MaxHMMsPerFrame = 6000 }},
	{"hmm5k", func(c *Config) { c.MaxHMMsPerFrame = 5000 }},
	{"hmm3k", func(c *Config) { c.MaxHMMsPerFrame = 3000 }},
	{"hmm2k", func(c *Config) { c.MaxHMMsPerFrame = 2000 }},
	{"hmm1k", func(c *Config) { c.MaxHMMsPerFrame = 1000 }},
	{"hmm500", func(c *Config) { c.MaxHMMsPerFrame = 500 }},
	{"hmm1k-beams", func(c *Config) { c.MaxHMMsPerFrame, c.Beam, c.WordBeam, c.PhoneBeam = 1000, 1e-40, 1e-24, 1e-40 }},
	{"wpf20", func(c *Config) { c.MaxWordsPerFrame = 20 }},
	{"wpf10", func(c *Config) { c.MaxWordsPerFrame = 10 }},
	{"wpf5", func(c *Config) { c.MaxWordsPerFrame = 5 }},
	{"hmm5k-wpf10", func(c *Config) { c.MaxHMMsPerFrame, c.MaxWordsPerFrame = 5000, 10 }},
	{"hmm3k-wpf10", func(c *Config) { c.MaxHMMsPerFrame, c.MaxWordsPerFrame = 3000, 10 }},
	{"stock", stock},
	{"hmm8k-topn4", func(c *Config) { c.MaxHMMsPerFrame, c.TopN = 8000, 4 }},
	{"topn4", func(c *Config) { c.TopN = 4 }},
	{"topn3", func(c *Config) { c.TopN = 3 }},
	{"topn2", func(c *Config) { c.TopN = 2 }},
	{"hmm6k-topn2", func(c *Config) { c.MaxHMMsPerFrame, c.TopN = 6000, 2 }},
	{"hmm5k-topn2", func(c *Config) { c.MaxHMMsPerFrame, c.TopN = 5000, 2 }},
	{"pl10", func(c *Config) { c.PhoneLookahead = new(10) }},
	{"pl0", func(c *Config) { c.PhoneLookahead = new(0) }},
	// hmm8k-*: every pool's search at -maxhmmpf 8000, the record search's
	// and the wideband live pool's cap (a live session's record decodes
	// as livegap's batch path here), with one more setting.
	{"hmm8k-topn3", func(c *Config) { c.MaxHMMsPerFrame, c.TopN = 8000, 3 }},
	{"hmm8k-topn2", func(c *Config) { c.MaxHMMsPerFrame, c.TopN = 8000, 2 }},
	// rec5k: the batch path at -maxhmmpf 5000, the live pool at 8000.
	{"rec5k", func(c *Config) { c.MaxHMMsPerFrame, c.LiveMaxHMMsPerFrame = 5000, 8000 }},
	// no-lean: the telephone live pool without its lean search for an
	// overloaded box (livebench's narrowband sweep, before and after).
	{"no-lean", noLean},
	// ungated: live decodes not held to one per CPU (LiveDecodes -1, the
	// behaviour before 2026-11-28); stock-no-lean: PocketSphinx's own
	// search without the lean one, a dearer search that saturates the box.
	{"ungated", ungated},
	{"stock-no-lean", func(c *Config) { stock(c); noLean(c) }},
	{"stock-no-lean-ungated", func(c *Config) { stock(c); noLean(c); ungated(c) }},
	{"lean3k", func(c *Config) { c.OverloadMaxHMMsPerFrame = 3000 }},
	{"lean2k", func(c *Config) { c.OverloadMaxHMMsPerFrame = 2000 }},
	{"lean1k", func(c *Config) { c.OverloadMaxHMMsPerFrame = 1000 }},
	// live-*: the wideband live pool's first pass alone (Config.Live:
	// SIP G.722, WebRTC Opus, WebSocket at 16 kHz); batch decodes as
	// "default" (issue 41).
	{"live-lw7", func(c *Config) { c.LiveLanguageWeight = 7 }},
	{"live-hmm6k", func(c *Config) { c.LiveMaxHMMsPerFrame = 6000 }},
	{"live-hmm5k", func(c *Config) { c.LiveMaxHMMsPerFrame = 5000 }},
	{"live-hmm6k-lw7", func(c *Config) { c.LiveMaxHMMsPerFrame, c.LiveLanguageWeight = 6000, 7 }},
	{"live-hmm5k-lw7", func(c *Config) { c.LiveMaxHMMsPerFrame, c.LiveLanguageWeight = 5000, 7 }},
	{"live-topn4", func(c *Config) { c.LiveTopN = 4 }},
	{"live-topn3", func(c *Config) { c.LiveTopN = 3 }},
	{"live-topn2", func(c *Config) { c.LiveTopN = 2 }},
	{"beam40", func(c *Config) { c.Beam = 1e-40 }},
	{"wbeam24", func(c *Config) { c.WordBeam = 1e-24 }},
	{"pbeam40", func(c *Config) { c.PhoneBeam = 1e-40 }},
}

// The settings that several presets combine: PocketSphinx's own search
// (-maxhmmpf 30000, -topn 4), no lean search, no gate on live decodes.
func stock(c *Config)   { c.MaxHMMsPerFrame, c.TopN = 30000, 4 }
func noLean(c *Config)  { c.OverloadMaxHMMsPerFrame = -1 }
func ungated(c *Config) { c.LiveDecodes = -1 }

// PresetNames lists the presets ApplyPreset knows, in trade-off order.
func PresetNames() []string {
	names := make([]string, len(presets))
	for i, p := range presets {
		names[i] = p.name
	}
	return names
}

// ApplyPreset sets c's search fields to the named preset's (other fields
// are left as they are).
func (c *Config) ApplyPreset(name string) error {
	i := slices.IndexFunc(presets, func(p preset) bool { return p.name == name })
	if i < 0 {
		return fmt.Errorf("sphinx: preset %q (known: %s)", name, strings.Join(PresetNames(), ", "))
	}
	presets[i].apply(c)
	return nil
}

// PresetSettings returns the named preset as configuration settings,
// "key=value" with the keys of Config's YAML names (fast_search,
// frame_downsample, topn, phone_lookahead, beam, word_beam, phone_beam,
// flat_beam, flat_word_beam, max_hmms_per_frame, max_words_per_frame,
// live_topn, overload_max_hmms_per_frame, live_decodes), for a daemon's
// --set sphinx.KEY=VALUE.
func PresetSettings(name string) ([]string, error) {
	var c Config
	if err := c.ApplyPreset(name); err != nil {
		return nil, err
	}
	var out []string
	add := func(key string, v any) { out = append(out, fmt.Sprintf("%s=%v", key, v)) }
	if c.FastSearch {
		add("fast_search", true)
	}
	if c.FrameDownsample != 0 {
		add("frame_downsample", c.FrameDownsample)
	}
	if c.TopN != 0 {
		add("topn", c.TopN)
	}
	if c.PhoneLookahead != nil {
		add("phone_lookahead", *c.PhoneLookahead)
	}
	for _, b := range []struct {
		key string
		v   float64
	}{{"beam", c.Beam}, {"word_beam", c.WordBeam}, {"phone_beam", c.PhoneBeam},
		{"flat_beam", c.FlatBeam}, {"flat_word_beam", c.FlatWordBeam}} {
		if b.v != 0 {
			add(b.key, b.v)
		}
	}
	if c.MaxHMMsPerFrame != 0 {
		add("max_hmms_per_frame", c.MaxHMMsPerFrame)
	}
	if c.MaxWordsPerFrame != 0 {
		add("max_words_per_frame", c.MaxWordsPerFrame)
	}
	if c.LiveMaxHMMsPerFrame != 0 {
		add("live_max_hmms_per_frame", c.LiveMaxHMMsPerFrame)
	}
	if c.LiveLanguageWeight != 0 {
		add("live_language_weight", c.LiveLanguageWeight)
	}
	if c.LiveTopN != 0 {
		add("live_topn", c.LiveTopN)
	}
	if c.OverloadMaxHMMsPerFrame != 0 {
		add("overload_max_hmms_per_frame", c.OverloadMaxHMMsPerFrame)
	}
	if c.LiveDecodes != 0 {
		add("live_decodes", c.LiveDecodes)
	}
	return out, nil
}
