package api

import (
	"errors"
	"time"

	"github.com/earshot-dev/earshot/config"
)

// OpenAIConfig configures the OpenAI-compatible door (/v1/audio/...): the
// openai: section of the file, which app.Config.HTTP joins into Config.
type OpenAIConfig struct {
	// KeepJobs keeps the pre-recorded job behind each /v1 request as any
	// other job of the caller's account (listed in /v2/pre-recorded,
	// deleted by retention); false deletes it, with its audio, once
	// answered (or failed); default true.
	KeepJobs *bool `yaml:"keep_jobs"`
	// Timeout bounds how long a /v1 request waits for its job to end
	// (queue and transcription); past it the answer is 503 and the job
	// goes on (deleted with keep_jobs false); default 10m.
	Timeout time.Duration `yaml:"timeout"`
}

// SetDefaults fills zero fields.
func (c *OpenAIConfig) SetDefaults() {
	if c.KeepJobs == nil {
		on := true
		c.KeepJobs = &on
	}
	if c.Timeout == 0 {
		c.Timeout = 10 * time.Minute
	}
}

// Validate checks the openai: section without I/O.
func (c OpenAIConfig) Validate() error {
	var errs []error
	if c.Timeout <= 0 {
		errs = append(errs, config.Errorf("timeout", "must be > 0, not %s", c.Timeout))
	}
	return errors.Join(errs...)
}

// keepJobs reports whether /v1 jobs are kept (the default).
func (c OpenAIConfig) keepJobs() bool { return c.KeepJobs == nil || *c.KeepJobs }
