package sphinx

import (
	"errors"
	"os"
	"runtime"
	"strconv"

	"github.com/earshot-dev/earshot/config"
)

// Default model locations of Debian's pocketsphinx-en-us package.
const (
	DefaultHMM  = "/usr/share/pocketsphinx/model/en-us/en-us"
	DefaultDict = "/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict"
	DefaultLM   = "/usr/share/pocketsphinx/model/en-us/en-us.lm.bin"
	// DefaultTelephoneHMM is where earshot's .deb installs the telephone-band
	// model (built by `make model` from Debian's en-us model; its shared
	// files are links into DefaultHMM).
	DefaultTelephoneHMM = "/usr/share/earshot/model/en-us-telephone"
	// NoTelephoneHMM as TelephoneHMM turns the telephone-band model off.
	NoTelephoneHMM = "none"
)

// DefaultTelephoneMaxHMMsPerFrame and DefaultTelephoneTopN are the
// telephone pools' -maxhmmpf and -topn when MaxHMMsPerFrame and TopN are
// unset. -maxhmmpf chosen on the corpus tuning subset (bench/cmd/livegap,
// mu-law, 2026-11-24 06:31 UTC, docs/live-tuning.md): against the earlier
// 8000, live CPU per audio second down by a quarter with live finals and
// batch no worse; that headroom is what lets a 2-CPU box hold 8 calls
// (issue 14 item 5). -topn 4 (PocketSphinx's) for both pools since
// 2026-11-24 20:45 UTC: on the larger tuning subset (71 utterances) it
// makes 1.2 points fewer batch errors than 2, and since the live path
// decodes its segments through pauses 0.66 (mu-law) and 0.56 (A-law)
// points fewer live errors, for 8 to 10 % more live CPU; 8 calls still
// keep their finals' p95 near 530 ms (docs/live-tuning.md).
const (
	DefaultTelephoneMaxHMMsPerFrame = 5000
	// DefaultFirstPassMaxHMMsPerFrame is the -maxhmmpf of the wideband
	// model's live pool (Live), whose first-pass search live streams of
	// wideband audio decode with, when MaxHMMsPerFrame is not set: the
	// model's pool for whole recordings (batch, the stock comparison)
	// keeps PocketSphinx's 30000.
	DefaultFirstPassMaxHMMsPerFrame = 8000
	DefaultTelephoneTopN            = 4
	// DefaultLiveTopN is the -topn of the wideband model's live pool
	// (Live) when neither LiveTopN nor TopN is set: PocketSphinx's 4.
	// The Gaussians are the largest share of a wideband live decode (the
	// phone-loop lookahead scores every codebook in every frame;
	// bench/CALLS.md 2026-11-30), and 2 costs the live pool about 16 %
	// less CPU, but on the corpus tuning subset (docs/live-tuning.md,
	// 2026-11-30 02:35 UTC) its live finals were 5 words better at 16 kHz
	// and 4 worse through G.722: not taken (issue 41 asks for no loss).
	DefaultLiveTopN = 4
	// DefaultOverloadMaxHMMsPerFrame is the -maxhmmpf of the telephone
	// live pool's lean search (OverloadMaxHMMsPerFrame unset): the search a
	// call's next segment decodes with while the box cannot keep up with
	// its calls in real time (recognizer: Stream.Lean). 1000 rather than
	// 2000: at 8 and 10 calls on the 2-CPU VM it kept finals' p95 at 3.2
	// and 9.1 s against 8.8 and 13.3 s, for about the same WER of the
	// finals (docs/live-tuning.md, 2026-11-25 06:30 UTC).
	DefaultOverloadMaxHMMsPerFrame = 1000
	// DefaultTelephoneLanguageWeight is the -lw of the telephone live
	// pool's searches (TelephoneLanguageWeight unset), against
	// PocketSphinx's 6.5: the live finals of calls come from the first pass,
	// which searches at -lw, while a batch decode's words come from its
	// later passes at -fwdflatlw 8.5 and -bestpathlw 9.5. Chosen on the
	// corpus tuning subset (bench/cmd/livegap -every 5, mu-law live finals,
	// 2026-11-28 09:30-10:05 UTC, docs/live-tuning.md): 6 / 6.5 / 6.8 / 7 /
	// 7.2 / 7.5 gave 41.60 / 41.55 / 40.89 / 40.23 / 41.05 / 41.20 %, and
	// 7 about 10 % less CPU. The batch pool keeps 6.5: 7 there was 0.26
	// points worse.
	DefaultTelephoneLanguageWeight = 7.0
	// DefaultRecordMaxHMMsPerFrame is the -maxhmmpf of the search a live
	// session's record decodes with on the wideband pool
	// (RecordMaxHMMsPerFrame unset; recordSearch): the pool's own passes,
	// capped as the wideband live pool's first pass
	// (DefaultFirstPassMaxHMMsPerFrame). See RecordMaxHMMsPerFrame.
	DefaultRecordMaxHMMsPerFrame = 8000
)

// MaxDecoders bounds the pool sizes; each decoder holds about 80 MB (a
// telephone live one about 110 MB: its lean search).
const MaxDecoders = 64

// Config selects the model files and the pool size. The zero value plus
// SetDefaults gives Debian's US English model with one decoder per CPU.
type Config struct {
	// HMM is the acoustic model directory (it holds mdef, means,
	// feat.params ...). Default DefaultHMM.
	HMM string `yaml:"hmm"`
	// Dict is the pronunciation dictionary. Default DefaultDict.
	Dict string `yaml:"dict"`
	// LM is the n-gram language model (ARPA or binary). Default DefaultLM.
	LM string `yaml:"lm"`
	// Decoders is the decoder pool size, 1..64: the number of streams that
	// can decode at once. Each costs about 80 MB and a model load at New.
	// In the daemon this is the wideband model's batch pool (whole
	// recordings and live sessions' batch passes); live streams have
	// pools of their own (LiveDecoders, TelephoneDecoders).
	// Default runtime.NumCPU().
	Decoders int `yaml:"decoders"`
	// LiveDecoders is the wideband model's live pool size, 1..64: the
	// decoders of live streams of wideband audio (16 kHz and more:
	// WebSocket sessions, WebRTC Opus, SIP G.722). A live stream holds a
	// decoder while its speaker talks (and through the short pauses), so
	// the pool bounds the wideband sessions that can talk at once. Each
	// decoder searches with the first pass only, capped as
	// DefaultFirstPassMaxHMMsPerFrame (Live), and costs about 80 MB. As
	// many as Decoders are loaded at start, the rest in the background
	// right after. Default 4 x Decoders: before it
	// (2026-11-28) wideband live streams decoded on the batch pool, and a
	// 2-CPU box let only 2 of them talk at once.
	LiveDecoders int `yaml:"live_decoders"`
	// Language is the language code the model serves. Default "en".
	Language string `yaml:"language"`
	// FastSearch skips PocketSphinx's second, flat-lexicon search pass
	// (-fwdflat no). It costs about a quarter less CPU and makes the end of
	// an utterance much cheaper (the second pass re-searches the whole
	// utterance there), which is what bounds live latency, at about the same
	// accuracy. Default false: the same search as pocketsphinx_batch.
	FastSearch bool `yaml:"fast_search"`
	// FrameDownsample is PocketSphinx's -ds, 1..4: the search scores every
	// Nth frame only, so its CPU falls nearly by that factor, at a cost in
	// accuracy (bench/cmd/livegap). Default 1.
	FrameDownsample int `yaml:"frame_downsample"`
	// TopN is -topn, 1..16: the Gaussians per codebook scored exactly in
	// each frame. Fewer is cheaper and less exact. 0 means PocketSphinx's
	// default, 4, for HMM, and DefaultTelephoneTopN for the telephone
	// model's pools.
	TopN int `yaml:"topn"`
	// PhoneLookahead is -pl_window, 0..20: frames of phone-loop lookahead
	// that prune the word search; 0 turns the lookahead off. Nil means 5,
	// PocketSphinx's default (a pointer, so that an asked 0 is not taken for
	// unset).
	PhoneLookahead *int `yaml:"phone_lookahead"`
	// Beam, WordBeam and PhoneBeam are -beam, -wbeam and -pbeam, the search's
	// pruning thresholds as probabilities relative to the best path, each in
	// 1e-80..1e-5 (a larger value prunes more: faster, less exact). 0 means
	// PocketSphinx's defaults: 1e-48, 7e-29 and 1e-48.
	Beam      float64 `yaml:"beam"`
	WordBeam  float64 `yaml:"word_beam"`
	PhoneBeam float64 `yaml:"phone_beam"`
	// FlatBeam and FlatWordBeam are -fwdflatbeam and -fwdflatwbeam, the
	// second (flat-lexicon) pass's pruning thresholds, each in 1e-80..1e-5.
	// 0 means PocketSphinx's defaults: 1e-64 and 7e-29.
	FlatBeam     float64 `yaml:"flat_beam"`
	FlatWordBeam float64 `yaml:"flat_word_beam"`
	// MaxHMMsPerFrame is -maxhmmpf, 100..100000: the most HMMs the search
	// keeps active in a frame (beyond it the beam narrows for that frame).
	// Lower is cheaper on noisy or ambiguous audio, where the active set
	// grows. 0 means PocketSphinx's default, 30000, for HMM, and
	// DefaultTelephoneMaxHMMsPerFrame for the telephone model's pool.
	MaxHMMsPerFrame int `yaml:"max_hmms_per_frame"`
	// MaxWordsPerFrame is -maxwpf, 1..1000: the most distinct words whose
	// ends the search keeps in a frame. 0 means PocketSphinx's default, no
	// limit.
	MaxWordsPerFrame int `yaml:"max_words_per_frame"`
	// OverloadMaxHMMsPerFrame is the -maxhmmpf, 100..100000, of the lean
	// search of the telephone model's live pool: while calls decode slower
	// than real time (the box is short of CPU), their next segments decode
	// with it, so finals stay prompt at some cost in accuracy, and go back
	// to the full search once the box keeps up again (docs/live-tuning.md).
	// 0 means DefaultOverloadMaxHMMsPerFrame; -1 turns the lean search off
	// (finals then fall behind when the box is short of CPU).
	OverloadMaxHMMsPerFrame int `yaml:"overload_max_hmms_per_frame"`
	// RecordMaxHMMsPerFrame is the -maxhmmpf, 100..100000, of the search
	// the wideband pool decodes a live session's recording with (its
	// batch pass, recognizer.StreamOptions.Record: a call over G.722, a
	// WebSocket or WebRTC session): the pool's own passes, capped. A
	// session's words came from its live pass already; its record is
	// CPU the box spends beside live calls (issue 41). Pre-recorded jobs
	// keep the pool's own search. 0 means DefaultRecordMaxHMMsPerFrame;
	// -1 turns it off (a record decodes as a pre-recorded job). Applies
	// only to a pool whose own search is wider (MaxHMMsPerFrame unset or
	// larger).
	RecordMaxHMMsPerFrame int `yaml:"record_max_hmms_per_frame"`
	// TelephoneLanguageWeight is the language weight (-lw), 1..30, of the
	// telephone model's live pool: the weight of the language model
	// against the acoustics in the search that calls' live finals come
	// from. 0 means DefaultTelephoneLanguageWeight. Whole recordings keep
	// PocketSphinx's weights.
	TelephoneLanguageWeight float64 `yaml:"telephone_language_weight"`
	// LiveMaxHMMsPerFrame is the -maxhmmpf, 100..100000, of the wideband
	// model's live pool (Live): the first-pass search that live streams
	// of wideband audio (SIP G.722, WebRTC Opus, WebSocket at 16 kHz)
	// decode with. 0 means MaxHMMsPerFrame when that is set, else
	// DefaultFirstPassMaxHMMsPerFrame.
	LiveMaxHMMsPerFrame int `yaml:"live_max_hmms_per_frame"`
	// LiveLanguageWeight is the language weight (-lw), 1..30, of the
	// wideband model's live pool (Live). 0 means PocketSphinx's 6.5: 7
	// was tried for issue 41 (2026-11-29, docs/live-tuning.md) and cost
	// 3.6 points of live finals on testdata for 9 % less live CPU.
	// Whole recordings and batch passes keep PocketSphinx's weights.
	LiveLanguageWeight float64 `yaml:"live_language_weight"`
	// LiveTopN is the -topn, 1..16, of the wideband model's live pool
	// (Live): the Gaussians per codebook scored exactly in each frame of
	// wideband live streams. 0 means TopN when that is set (it applies to
	// every search), else DefaultLiveTopN. Whole recordings and batch
	// passes keep TopN.
	LiveTopN int `yaml:"live_topn"`
	// LanguageWeight is the pool's -lw; 0 PocketSphinx's 6.5. Not
	// configuration: Telephone sets it from TelephoneLanguageWeight,
	// Live from LiveLanguageWeight.
	LanguageWeight float64 `yaml:"-"`
	// LiveDecodes is how many live streams of the process decode at once,
	// 1..256 (recognizer.CPU, which the composition root makes with it and
	// passes to New): a stream's block of audio waits for a free slot
	// and then decodes to its end, instead of the kernel time-slicing more
	// decoders than CPUs on cold caches. 0 means one per CPU Go uses
	// (GOMAXPROCS); -1 means no limit (before 2026-11-28). Whole recordings
	// are not counted.
	LiveDecodes int `yaml:"live_decodes"`
	// TelephoneHMM is the acoustic model for telephone-band audio (a source
	// below 16 kHz, or no speech energy above 4 kHz): Debian's en-us model
	// adapted to G.711 (model/en-us-telephone, `make model`). It gets its
	// own pool of TelephoneDecoders. Empty means DefaultTelephoneHMM when
	// that directory exists, else none; "none" turns it off (telephone
	// audio then decodes with HMM).
	TelephoneHMM string `yaml:"telephone_hmm"`
	// TelephoneDecoders is the telephone model's live pool size, 1..64. A live
	// call holds a decoder while its speaker talks (and through the short
	// pauses), so the pool bounds the calls that can talk at once; each
	// decoder costs about 110 MB (its lean search included). As many as
	// Decoders are loaded at start, the rest in the background right
	// after (Engine.warm). Default 8 x Decoders (16 on a 2-CPU box: 8
	// SIPREC calls' 16 streams, of which about half talk at once, up to
	// what the CPUs keep up with; before 2026-11-29 4 x, and a speech start
	// under 8 SIPREC calls waited for a decoder: live final p95 786 and
	// 804 ms against 827 and 823 in one sitting, for about 95 MB of RSS a
	// decoder, bench/CALLS.md). Whole recordings decode
	// on the telephone model's batch pool of Decoders more (TelephoneBatch).
	TelephoneDecoders int `yaml:"telephone_decoders"`
	// LoadOnDemand: no pool loads a decoder at start or in the background
	// after; a stream or job that finds no idle decoder loads one
	// (NewStream), which then stays in the pool, and a lean search is made
	// when first used. The pools' sizes, and so the streams that decode at
	// once, are the same. It spares a daemon that starts often and serves
	// a few streams the CPU of filling pools it never uses (about 0.2 s a
	// decoder on a quick box, 0.6 s on a slow one: some 5 s of CPU on a
	// 2-CPU box with a telephone model), at the cost of a model load for
	// the first stream or job on each decoder; a bad model path is then
	// found at the first use, not at start. Until 2026-11-30 the pools
	// still loaded Decoders each at start (4 to 6 decoders, about 2.5 CPU
	// s of each e2e test daemon's start on a slow box). Default false: the
	// pools load Decoders at start and fill in the background right after
	// (Engine.warm). The e2e tests' daemons set it.
	LoadOnDemand bool `yaml:"load_on_demand"`
	// Preload is how many of the pool's decoders New loads; the others
	// are loaded in the background after it returns. 0 means all. Not
	// configuration: Telephone sets it.
	Preload int `yaml:"-"`
	// OnDemand: New loads none of the pool's decoders and nothing is
	// loaded ahead of need; a stream that finds no idle decoder loads one
	// (NewStream), which then stays in the pool. For a pool whose streams
	// can wait for a model load and that many boxes never use (the
	// telephone model's batch pool: whole telephone-band recordings and
	// calls' batch passes). Not configuration: TelephoneBatch sets it.
	OnDemand bool `yaml:"-"`
	// FirstPassOnly makes the pool's decoders search with the first pass
	// only (-fwdflat no; the lattice pass stays, which only Finish runs):
	// a pool that serves live streams alone, whose finals are read from
	// the first pass (Stream.Path) and, when a segment ends, from the best
	// path through its lattice.
	// Without it such a stream makes a first-pass search of its own on
	// the decoder's first live use (useFirstPass: two more searches,
	// their lexicon trees built then, which made the first seconds of 8
	// calls on a fresh pool CPU-bound). Not configuration: Live and
	// Telephone set it.
	FirstPassOnly bool `yaml:"-"`
	// TenantShare is the share of the pool, 0..1, that the streams of one
	// tenant (recognizer.StreamOptions.Tenant: a live session's account)
	// may hold at once: TenantShare x Decoders rounded down, at least one
	// decoder; past it a stream of that tenant waits as for a free
	// decoder (share.go). 0 or 1: no bound. Not configuration here: the
	// daemon sets it from live.decoder_share.
	TenantShare float64 `yaml:"-"`
}

// tenantLimit is the decoders one tenant may hold (TenantShare), 0 when
// there is no bound.
func (c Config) tenantLimit() int {
	if c.TenantShare <= 0 || c.TenantShare >= 1 {
		return 0
	}
	return max(1, int(c.TenantShare*float64(c.Decoders)))
}

// Telephone returns the configuration of the telephone-band pool (HMM the
// telephone model, Decoders TelephoneDecoders, MaxHMMsPerFrame and TopN
// DefaultTelephoneMaxHMMsPerFrame and DefaultTelephoneTopN unless set),
// false when there is none.
// Call it on a config that passed SetDefaults and Validate.
func (c Config) Telephone() (Config, bool) {
	hmm := c.TelephoneHMM
	switch hmm {
	case NoTelephoneHMM:
		return Config{}, false
	case "":
		if st, err := os.Stat(DefaultTelephoneHMM); err != nil || !st.IsDir() {
			return Config{}, false
		}
		hmm = DefaultTelephoneHMM
	}
	t := c
	t.HMM, t.Decoders, t.Preload = hmm, c.TelephoneDecoders, min(c.Decoders, c.TelephoneDecoders)
	t.FirstPassOnly = true // live calls only; whole recordings go to TelephoneBatch
	if t.MaxHMMsPerFrame == 0 {
		t.MaxHMMsPerFrame = DefaultTelephoneMaxHMMsPerFrame
	}
	if t.TopN == 0 {
		t.TopN = DefaultTelephoneTopN
	}
	t.LanguageWeight = c.TelephoneLanguageWeight
	if t.LanguageWeight == 0 {
		t.LanguageWeight = DefaultTelephoneLanguageWeight
	}
	t.TelephoneHMM, t.TelephoneDecoders = NoTelephoneHMM, t.Decoders
	return t, true
}

// Live returns the configuration of the wideband model's live pool:
// LiveDecoders decoders (as many as Decoders loaded at New, the rest in
// the background) that search with the first pass only (live finals are
// read from it) at firstPassMaxHMMs and LiveLanguageWeight, with no lean
// search and no telephone model. Call it on a config that passed SetDefaults and
// Validate.
func (c Config) Live() Config {
	l := c
	l.Decoders, l.Preload = c.LiveDecoders, min(c.Decoders, c.LiveDecoders)
	l.FirstPassOnly = true
	l.MaxHMMsPerFrame = c.firstPassMaxHMMs()
	l.LanguageWeight = c.LiveLanguageWeight
	l.TopN = c.liveTopN()
	l.OverloadMaxHMMsPerFrame = -1
	l.TelephoneHMM, l.TelephoneDecoders, l.LiveDecoders = NoTelephoneHMM, l.Decoders, l.Decoders
	return l
}

// TelephoneBatch returns the configuration of the telephone model's batch
// pool, which decodes whole recordings (pre-recorded jobs and the batch
// pass over a call's recording): Telephone's, but Decoders decoders (as
// the wideband pool: batch work runs one segment per CPU) and all search
// passes. False when there is no telephone model. Call it on a config
// that passed SetDefaults and Validate.
func (c Config) TelephoneBatch() (Config, bool) {
	t, ok := c.Telephone()
	if !ok {
		return Config{}, false
	}
	t.Decoders, t.TelephoneDecoders, t.Preload = c.Decoders, c.Decoders, 0
	t.FirstPassOnly = false
	// The first pass and the lattice's best path, without the flat-lexicon
	// pass (FastSearch): on the corpus tuning subset through mu-law
	// (livegap -corpus -every 15 -presets default,fast, 2026-11-29 10:58
	// UTC) the batch path's WER 36.43 -> 36.57 % (one word) for 0.177 ->
	// 0.135 CPU s per audio s; a call's record is the batch pass over both
	// legs, most of a call's CPU (bench/CALLS.md, issue 41).
	t.FastSearch = true
	t.LanguageWeight = c.LanguageWeight
	// Loaded when first needed: 2 decoders (about 160 MB) that a box
	// taking only wideband audio and calls never used, and a whole
	// recording waits for its result anyway.
	t.OnDemand = true
	return t, true
}

// SetDefaults fills zero fields with their defaults.
func (c *Config) SetDefaults() {
	if c.HMM == "" {
		c.HMM = DefaultHMM
	}
	if c.Dict == "" {
		c.Dict = DefaultDict
	}
	if c.LM == "" {
		c.LM = DefaultLM
	}
	if c.Decoders == 0 {
		c.Decoders = runtime.NumCPU()
	}
	if c.Language == "" {
		c.Language = "en"
	}
	if c.TelephoneDecoders == 0 {
		c.TelephoneDecoders = min(8*c.Decoders, MaxDecoders)
	}
	if c.LiveDecoders == 0 {
		c.LiveDecoders = min(4*c.Decoders, MaxDecoders)
	}
	if c.FrameDownsample == 0 {
		c.FrameDownsample = 1
	}
}

// Validate reports every problem at once, each a *config.Problem naming
// its key (relative to this section). It checks
// that the model paths exist (HMM a directory, Dict and LM files) and that
// Decoders is in 1..MaxDecoders.
func (c Config) Validate() error {
	var errs []error
	check := func(key, path string, dir bool) {
		if path == "" {
			errs = append(errs, config.Errorf(key, "empty path"))
			return
		}
		st, err := os.Stat(path)
		switch {
		case err != nil:
			errs = append(errs, config.Errorf(key, "%v", err))
		case dir && !st.IsDir():
			errs = append(errs, config.Errorf(key, "%s is not a directory", path))
		case !dir && st.IsDir():
			errs = append(errs, config.Errorf(key, "%s is a directory", path))
		}
	}
	check("hmm", c.HMM, true)
	check("dict", c.Dict, false)
	check("lm", c.LM, false)
	if c.TelephoneHMM != "" && c.TelephoneHMM != NoTelephoneHMM {
		check("telephone_hmm", c.TelephoneHMM, true)
	}
	if c.TelephoneDecoders < 1 || c.TelephoneDecoders > MaxDecoders {
		errs = append(errs, config.Errorf("telephone_decoders", "%d not in 1..%d", c.TelephoneDecoders, MaxDecoders))
	}
	if c.Decoders < 1 || c.Decoders > MaxDecoders {
		errs = append(errs, config.Errorf("decoders", "%d not in 1..%d", c.Decoders, MaxDecoders))
	}
	if c.LiveDecoders < 1 || c.LiveDecoders > MaxDecoders {
		errs = append(errs, config.Errorf("live_decoders", "%d not in 1..%d", c.LiveDecoders, MaxDecoders))
	}
	if c.Language == "" {
		errs = append(errs, config.Errorf("language", "empty"))
	}
	if c.FrameDownsample < 1 || c.FrameDownsample > 4 {
		errs = append(errs, config.Errorf("frame_downsample", "%d not in 1..4", c.FrameDownsample))
	}
	if w := c.TelephoneLanguageWeight; w != 0 && (w < 1 || w > 30) {
		errs = append(errs, config.Errorf("telephone_language_weight", "%g not 0 or in 1..30", w))
	}
	if w := c.LiveLanguageWeight; w != 0 && (w < 1 || w > 30) {
		errs = append(errs, config.Errorf("live_language_weight", "%g not 0 or in 1..30", w))
	}
	if n := c.LiveMaxHMMsPerFrame; n != 0 && (n < 100 || n > 100000) {
		errs = append(errs, config.Errorf("live_max_hmms_per_frame", "%d not 0 or in 100..100000", n))
	}
	if c.TopN < 0 || c.TopN > 16 {
		errs = append(errs, config.Errorf("topn", "%d not 0 or in 1..16", c.TopN))
	}
	if c.LiveTopN < 0 || c.LiveTopN > 16 {
		errs = append(errs, config.Errorf("live_topn", "%d not 0 or in 1..16", c.LiveTopN))
	}
	if p := c.PhoneLookahead; p != nil && (*p < 0 || *p > 20) {
		errs = append(errs, config.Errorf("phone_lookahead", "%d not in 0..20", *p))
	}
	if n := c.OverloadMaxHMMsPerFrame; n != 0 && n != -1 && (n < 100 || n > 100000) {
		errs = append(errs, config.Errorf("overload_max_hmms_per_frame", "%d not 0, -1 or in 100..100000", n))
	}
	if n := c.RecordMaxHMMsPerFrame; n != 0 && n != -1 && (n < 100 || n > 100000) {
		errs = append(errs, config.Errorf("record_max_hmms_per_frame", "%d not 0, -1 or in 100..100000", n))
	}
	if n := c.LiveDecodes; n < -1 || n > 256 {
		errs = append(errs, config.Errorf("live_decodes", "%d not 0, -1 or in 1..256", n))
	}
	if n := c.MaxHMMsPerFrame; n != 0 && (n < 100 || n > 100000) {
		errs = append(errs, config.Errorf("max_hmms_per_frame", "%d not 0 or in 100..100000", n))
	}
	if n := c.MaxWordsPerFrame; n != 0 && (n < 1 || n > 1000) {
		errs = append(errs, config.Errorf("max_words_per_frame", "%d not 0 or in 1..1000", n))
	}
	for _, b := range []struct {
		key string
		v   float64
	}{{"beam", c.Beam}, {"word_beam", c.WordBeam}, {"phone_beam", c.PhoneBeam},
		{"flat_beam", c.FlatBeam}, {"flat_word_beam", c.FlatWordBeam}} {
		if b.v != 0 && !(b.v >= 1e-80 && b.v <= 1e-5) {
			errs = append(errs, config.Errorf(b.key, "%v not 0 or in 1e-80..1e-5", b.v))
		}
	}
	return errors.Join(errs...)
}

// leanMaxHMMs is the -maxhmmpf of the lean search of the pool's decoders,
// 0 for none: only a first-pass-only pool (the telephone live pool) has
// one, and only when it is leaner than the pool's own search.
func (c Config) leanMaxHMMs() int {
	n := c.OverloadMaxHMMsPerFrame
	switch {
	case !c.FirstPassOnly || n < 0:
		return 0
	case n == 0:
		n = DefaultOverloadMaxHMMsPerFrame
	}
	if own := c.MaxHMMsPerFrame; own > 0 && n >= own {
		return 0
	}
	return n
}

// recordMaxHMMs is the -maxhmmpf of the record search of the pool's
// decoders, 0 for none: only a pool with all passes has one (the
// wideband pool; the telephone batch pool's own search is leaner), and
// only when it is leaner than the pool's own search (PocketSphinx's
// 30000 when MaxHMMsPerFrame is unset).
func (c Config) recordMaxHMMs() int {
	n := c.RecordMaxHMMsPerFrame
	switch {
	case c.FirstPassOnly || n < 0:
		return 0
	case n == 0:
		n = DefaultRecordMaxHMMsPerFrame
	}
	own := c.MaxHMMsPerFrame
	if own == 0 {
		own = pocketSphinxMaxHMMs
	}
	if n >= own {
		return 0
	}
	return n
}

// liveTopN is the -topn of the wideband live pool (Live): LiveTopN when
// set, else TopN when set, else DefaultLiveTopN.
func (c Config) liveTopN() int {
	switch {
	case c.LiveTopN > 0:
		return c.LiveTopN
	case c.TopN > 0:
		return c.TopN
	}
	return DefaultLiveTopN
}

// pocketSphinxMaxHMMs is PocketSphinx's own -maxhmmpf.
const pocketSphinxMaxHMMs = 30000

// firstPassMaxHMMs is the -maxhmmpf of the live pool's first-pass search
// (Live): LiveMaxHMMsPerFrame when set, else MaxHMMsPerFrame when set (it
// applies to every search), else DefaultFirstPassMaxHMMsPerFrame.
func (c Config) firstPassMaxHMMs() int {
	if c.LiveMaxHMMsPerFrame > 0 {
		return c.LiveMaxHMMsPerFrame
	}
	if c.MaxHMMsPerFrame > 0 {
		return c.MaxHMMsPerFrame
	}
	return DefaultFirstPassMaxHMMsPerFrame
}

// searchArgs are the ps_init arguments of cfg's search settings; settings
// left at their zero value keep PocketSphinx's defaults.
func searchArgs(cfg Config) []string {
	var args []string
	if cfg.FirstPassOnly || cfg.FastSearch {
		args = append(args, "-fwdflat", "no")
	}
	if cfg.FrameDownsample > 1 {
		args = append(args, "-ds", strconv.Itoa(cfg.FrameDownsample))
	}
	if cfg.TopN > 0 {
		args = append(args, "-topn", strconv.Itoa(cfg.TopN))
	}
	if cfg.PhoneLookahead != nil {
		args = append(args, "-pl_window", strconv.Itoa(*cfg.PhoneLookahead))
	}
	for _, b := range []struct {
		arg string
		v   float64
	}{{"-beam", cfg.Beam}, {"-wbeam", cfg.WordBeam}, {"-pbeam", cfg.PhoneBeam},
		{"-fwdflatbeam", cfg.FlatBeam}, {"-fwdflatwbeam", cfg.FlatWordBeam}} {
		if b.v > 0 {
			args = append(args, b.arg, strconv.FormatFloat(b.v, 'g', -1, 64))
		}
	}
	if cfg.MaxHMMsPerFrame > 0 {
		args = append(args, "-maxhmmpf", strconv.Itoa(cfg.MaxHMMsPerFrame))
	}
	if cfg.MaxWordsPerFrame > 0 {
		args = append(args, "-maxwpf", strconv.Itoa(cfg.MaxWordsPerFrame))
	}
	if cfg.LanguageWeight > 0 {
		args = append(args, "-lw", strconv.FormatFloat(cfg.LanguageWeight, 'g', -1, 64))
	}
	return args
}
