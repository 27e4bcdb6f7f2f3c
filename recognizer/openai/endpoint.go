package openai

import (
	"errors"
	"net/url"
	"time"

	"github.com/earshot-dev/earshot/config"
)

// Defaults and bounds of Endpoint.
const (
	DefaultTimeout = 60 * time.Second
	DefaultRetries = 2
	DefaultBackoff = 200 * time.Millisecond
	// MaxRetries bounds Endpoint.Retries.
	MaxRetries = 10
	// MaxRetryAfter bounds how long a server's Retry-After makes a retry
	// wait.
	MaxRetryAfter = 10 * time.Second
)

// Endpoint is an OpenAI-compatible server and how hard to try it: the keys
// a remote speech engine and the chat backend share. It sits inline in
// their Configs.
type Endpoint struct {
	// URL is the server's API base, http or https, to which the request's
	// path is appended (e.g. http://gpu-box:8000/v1); no credentials,
	// query or fragment. Whether it is required is the holder's rule.
	URL string `yaml:"url"`
	// Model is sent as the "model" field; required with URL.
	Model string `yaml:"model"`
	// APIKey is sent as "Authorization: Bearer <key>" when set. Never
	// printed or logged.
	APIKey config.Secret `yaml:"api_key"`
	// Timeout bounds one attempt, upload to last byte of the answer.
	// Default 60s.
	Timeout time.Duration `yaml:"timeout"`
	// Retries is how many times a failed attempt (connection error, 408,
	// 429, 5xx) is repeated, 0 to 10; -1 means never. Default 2.
	Retries int `yaml:"retries"`
	// Backoff is the wait before the first retry, doubling after each (a
	// longer Retry-After wins). Default 200ms.
	Backoff time.Duration `yaml:"backoff"`
}

// SetDefaults fills zero fields with their defaults.
func (e *Endpoint) SetDefaults() {
	if e.Timeout == 0 {
		e.Timeout = DefaultTimeout
	}
	if e.Retries == 0 {
		e.Retries = DefaultRetries
	}
	if e.Backoff == 0 {
		e.Backoff = DefaultBackoff
	}
}

// retries is Retries with -1 (never) as 0.
func (e Endpoint) retries() int { return max(e.Retries, 0) }

// Validate reports every problem at once, each a *config.Problem naming
// its key. An empty URL is not one (the holder decides whether it is
// required); a model without it is.
func (e Endpoint) Validate() error {
	var errs []error
	bad := func(key, format string, a ...any) { errs = append(errs, config.Errorf(key, format, a...)) }
	if e.URL != "" {
		if u, err := url.Parse(e.URL); err != nil {
			bad("url", "%v", err)
		} else if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
			bad("url", "%q is not an http or https URL with a host", e.URL)
		} else if u.User != nil {
			bad("url", "credentials in the URL; use api_key")
		} else if u.RawQuery != "" || u.Fragment != "" {
			bad("url", "%q has a query or fragment", e.URL)
		}
		if e.Model == "" {
			bad("model", "required when url is set")
		}
	}
	if e.Timeout <= 0 {
		bad("timeout", "must be > 0, not %s", e.Timeout)
	}
	if e.Retries < -1 || e.Retries > MaxRetries {
		bad("retries", "must be -1 (never) to %d, not %d", MaxRetries, e.Retries)
	}
	if e.Backoff < 0 {
		bad("backoff", "must not be negative, not %s", e.Backoff)
	}
	return errors.Join(errs...)
}
