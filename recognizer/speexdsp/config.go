package speexdsp

import (
	"errors"
	"fmt"
	"math"
)

// Config tunes a Preprocessor. The zero value plus SetDefaults is denoise
// and AGC on with SpeexDSP's own defaults, except AGCMaxGainDB (see there).
type Config struct {
	// DisableDenoise turns the spectral noise suppressor off. Default
	// false (denoise on).
	DisableDenoise bool `yaml:"disable_denoise"`
	// NoiseSuppressDB is the largest attenuation applied to noise, in dB,
	// -60..-1. Default -15 (SpeexDSP's default); deeper suppression
	// removes more noise and more of the speech with it.
	NoiseSuppressDB int `yaml:"noise_suppress_db"`
	// DisableAGC turns automatic gain control off. Default false (AGC on).
	DisableAGC bool `yaml:"disable_agc"`
	// AGCLevel is the speech level AGC aims for, as an RMS in 16-bit
	// sample units, 1000..30000. Default 8000 (SpeexDSP's default, about
	// -12 dBFS).
	AGCLevel float64 `yaml:"agc_level"`
	// AGCMaxGainDB bounds the gain AGC may apply, 1..60 dB. Default 20:
	// lower than SpeexDSP's 30 so pauses full of noise are not pumped up
	// to speech level.
	AGCMaxGainDB int `yaml:"agc_max_gain_db"`
	// AGCIncrementDB is the fastest the gain may rise, 1..100 dB per
	// second. Default 12 (SpeexDSP's default).
	AGCIncrementDB int `yaml:"agc_increment_db"`
	// AGCDecrementDB is the fastest the gain may fall, -200..-1 dB per
	// second. Default -40 (SpeexDSP's default).
	AGCDecrementDB int `yaml:"agc_decrement_db"`
}

// SetDefaults fills zero fields with their defaults.
func (c *Config) SetDefaults() {
	if c.NoiseSuppressDB == 0 {
		c.NoiseSuppressDB = -15
	}
	if c.AGCLevel == 0 {
		c.AGCLevel = 8000
	}
	if c.AGCMaxGainDB == 0 {
		c.AGCMaxGainDB = 20
	}
	if c.AGCIncrementDB == 0 {
		c.AGCIncrementDB = 12
	}
	if c.AGCDecrementDB == 0 {
		c.AGCDecrementDB = -40
	}
}

// Validate reports every out-of-range field, each naming its key.
func (c Config) Validate() error {
	var errs []error
	if c.NoiseSuppressDB < -60 || c.NoiseSuppressDB > -1 {
		errs = append(errs, fmt.Errorf("speexdsp: noise_suppress_db: %d not in -60..-1", c.NoiseSuppressDB))
	}
	if c.AGCLevel < 1000 || c.AGCLevel > 30000 || math.IsNaN(c.AGCLevel) {
		errs = append(errs, fmt.Errorf("speexdsp: agc_level: %v not in 1000..30000", c.AGCLevel))
	}
	if c.AGCMaxGainDB < 1 || c.AGCMaxGainDB > 60 {
		errs = append(errs, fmt.Errorf("speexdsp: agc_max_gain_db: %d not in 1..60", c.AGCMaxGainDB))
	}
	if c.AGCIncrementDB < 1 || c.AGCIncrementDB > 100 {
		errs = append(errs, fmt.Errorf("speexdsp: agc_increment_db: %d not in 1..100", c.AGCIncrementDB))
	}
	if c.AGCDecrementDB < -200 || c.AGCDecrementDB > -1 {
		errs = append(errs, fmt.Errorf("speexdsp: agc_decrement_db: %d not in -200..-1", c.AGCDecrementDB))
	}
	return errors.Join(errs...)
}
