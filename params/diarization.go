package params

// maxSpeakers bounds the diarization speaker counts (SPEC is silent).
const maxSpeakers = 100

// DiarizationConfig is diarization_config. Rules where SPEC is silent: each
// count is an integer from 1 to 100; min_speakers ≤ max_speakers; and
// number_of_speakers, when given with either bound, lies within them.
type DiarizationConfig struct {
	NumberOfSpeakers *int `json:"number_of_speakers,omitempty"`
	MinSpeakers      *int `json:"min_speakers,omitempty"`
	MaxSpeakers      *int `json:"max_speakers,omitempty"`
}

func decodeDiarizationConfig(parent *object) *DiarizationConfig {
	o, ok := parent.object("diarization_config")
	if !ok {
		return nil
	}
	defer o.done()
	count := func(name string) *int {
		n, path, ok := o.integer(name)
		if !ok || !inRange(o.p, path, float64(n), 1, maxSpeakers) {
			return nil
		}
		return &n
	}
	c := &DiarizationConfig{
		NumberOfSpeakers: count("number_of_speakers"),
		MinSpeakers:      count("min_speakers"),
		MaxSpeakers:      count("max_speakers"),
	}
	if c.MinSpeakers != nil && c.MaxSpeakers != nil && *c.MinSpeakers > *c.MaxSpeakers {
		o.p.addf(child(o.path, "min_speakers"), "must not be more than max_speakers")
	} else if n := c.NumberOfSpeakers; n != nil {
		if c.MinSpeakers != nil && *n < *c.MinSpeakers || c.MaxSpeakers != nil && *n > *c.MaxSpeakers {
			o.p.addf(child(o.path, "number_of_speakers"), "must be from min_speakers to max_speakers")
		}
	}
	return c
}
