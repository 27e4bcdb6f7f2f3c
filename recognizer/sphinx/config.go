package sphinx

import (
	"errors"
	"os"
	"runtime"

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

// MaxDecoders bounds Config.Decoders; each decoder holds about 40 MB.
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
	// can decode at once. Each costs about 40 MB and a model load at New.
	// Default runtime.NumCPU().
	Decoders int `yaml:"decoders"`
	// Language is the language code the model serves. Default "en".
	Language string `yaml:"language"`
	// FastSearch skips PocketSphinx's second, flat-lexicon search pass
	// (-fwdflat no). It costs about a quarter less CPU and makes the end of
	// an utterance much cheaper (the second pass re-searches the whole
	// utterance there), which is what bounds live latency, at about the same
	// accuracy. Default false: the same search as pocketsphinx_batch.
	FastSearch bool `yaml:"fast_search"`
	// TelephoneHMM is the acoustic model for telephone-band audio (a source
	// below 16 kHz, or no speech energy above 4 kHz): Debian's en-us model
	// adapted to G.711 (model/en-us-telephone, `make model`). It gets its
	// own pool of TelephoneDecoders. Empty means DefaultTelephoneHMM when
	// that directory exists, else none; "none" turns it off (telephone
	// audio then decodes with HMM).
	TelephoneHMM string `yaml:"telephone_hmm"`
	// TelephoneDecoders is the telephone model's pool size, 1..64 (each
	// about 40 MB more). Default Decoders.
	TelephoneDecoders int `yaml:"telephone_decoders"`
}

// Telephone returns the configuration of the telephone-band pool (HMM the
// telephone model, Decoders TelephoneDecoders), false when there is none.
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
	t.HMM, t.Decoders = hmm, c.TelephoneDecoders
	t.TelephoneHMM, t.TelephoneDecoders = NoTelephoneHMM, t.Decoders
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
		c.TelephoneDecoders = c.Decoders
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
	if c.Language == "" {
		errs = append(errs, config.Errorf("language", "empty"))
	}
	return errors.Join(errs...)
}
