package diarization

import (
	"errors"
	"fmt"
	"math"
)

// Config is the request's diarization_config plus the clustering
// threshold. Zero values mean "not given".
type Config struct {
	// NumberOfSpeakers, when > 0, is the exact number of speakers to find
	// (fewer only when there are fewer utterances). Default 0: estimate.
	NumberOfSpeakers int `yaml:"number_of_speakers"`
	// MinSpeakers bounds the estimated count from below. Default 0 (1).
	MinSpeakers int `yaml:"min_speakers"`
	// MaxSpeakers bounds it from above. Default 0: no bound.
	MaxSpeakers int `yaml:"max_speakers"`
	// Threshold is how far apart (average-linkage distance) two clusters
	// must be to be different speakers when the count is estimated, as a
	// multiple of the recording's own same-speaker distance: the median
	// distance between the two halves of each utterance. Default
	// DefaultThreshold.
	Threshold float64 `yaml:"threshold"`
}

// DefaultThreshold is Config.Threshold's default: utterances of one
// speaker differ from each other more than halves of one utterance do
// (other words, other lengths), so the cut sits above 1.
const DefaultThreshold = 1.5

// SetDefaults fills zero fields with their defaults.
func (c *Config) SetDefaults() {
	if c.Threshold == 0 {
		c.Threshold = DefaultThreshold
	}
}

// Validate reports every invalid field, each naming its key.
func (c Config) Validate() error {
	var errs []error
	if c.NumberOfSpeakers < 0 {
		errs = append(errs, fmt.Errorf("%w: number_of_speakers %d < 0", ErrConfig, c.NumberOfSpeakers))
	}
	if c.MinSpeakers < 0 {
		errs = append(errs, fmt.Errorf("%w: min_speakers %d < 0", ErrConfig, c.MinSpeakers))
	}
	if c.MaxSpeakers < 0 {
		errs = append(errs, fmt.Errorf("%w: max_speakers %d < 0", ErrConfig, c.MaxSpeakers))
	}
	if c.MinSpeakers > 0 && c.MaxSpeakers > 0 && c.MinSpeakers > c.MaxSpeakers {
		errs = append(errs, fmt.Errorf("%w: min_speakers %d > max_speakers %d", ErrConfig, c.MinSpeakers, c.MaxSpeakers))
	}
	if c.Threshold < 0 || c.Threshold > 10 || math.IsNaN(c.Threshold) {
		errs = append(errs, fmt.Errorf("%w: threshold %v not in 0..10", ErrConfig, c.Threshold))
	}
	return errors.Join(errs...)
}
