package remote

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/recognizer/openai"
)

func TestConfigDefaults(t *testing.T) {
	c := Config{Endpoint: openai.Endpoint{URL: "http://gpu-box:8000/v1", Model: "whisper-1"}}
	c.SetDefaults()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Name != "remote" || c.Capacity != 4 || c.Timeout != time.Minute || c.Retries != 2 || c.BreakerFailures != 5 ||
		c.BreakerCooldown != 30*time.Second || c.PartialInterval != time.Second || len(c.Languages) != 99 {
		t.Errorf("defaults %+v", c)
	}
	// Negative values keep their meaning: no retries, no partials.
	c = Config{Endpoint: openai.Endpoint{URL: "https://stt.example/v1/", Model: "m", Retries: -1}, PartialInterval: -1}
	c.SetDefaults()
	if err := c.Validate(); err != nil || c.Retries != -1 || c.partialsEnabled() {
		t.Errorf("negative: %+v %v", c, err)
	}
}

func TestConfigValidate(t *testing.T) {
	valid := func() Config {
		c := Config{Endpoint: openai.Endpoint{URL: "http://gpu-box:8000/v1", Model: "whisper-1"}}
		c.SetDefaults()
		return c
	}
	tests := []struct {
		name   string
		change func(*Config)
		key    string // must appear in the error
	}{
		{"no url", func(c *Config) { c.URL = "" }, "url: empty"},
		{"ftp url", func(c *Config) { c.URL = "ftp://gpu-box/v1" }, "url:"},
		{"no host", func(c *Config) { c.URL = "http:///v1" }, "url:"},
		{"credentials in url", func(c *Config) { c.URL = "http://u:p@gpu-box/v1" }, "url: credentials"},
		{"query", func(c *Config) { c.URL = "http://gpu-box/v1?x=1" }, "url:"},
		{"bad url", func(c *Config) { c.URL = "http://gpu box/%zz" }, "url:"},
		{"no model", func(c *Config) { c.Model = "" }, "model: required"},
		{"no name", func(c *Config) { c.Name = "" }, "name: empty"},
		{"unknown language", func(c *Config) { c.Languages = []string{"en", "english"} }, `languages: item 1: "english"`},
		{"repeated language", func(c *Config) { c.Languages = []string{"en", "en"} }, "languages: item 1"},
		{"capacity", func(c *Config) { c.Capacity = -1 }, "capacity: -1"},
		{"capacity too big", func(c *Config) { c.Capacity = MaxCapacity + 1 }, "capacity"},
		{"timeout", func(c *Config) { c.Timeout = -time.Second }, "timeout"},
		{"retries", func(c *Config) { c.Retries = 11 }, "retries: must be -1 (never) to 10, not 11"},
		{"breaker failures", func(c *Config) { c.BreakerFailures = -2 }, "breaker_failures"},
		{"breaker cooldown", func(c *Config) { c.BreakerCooldown = -1 }, "breaker_cooldown"},
		{"prompt", func(c *Config) { c.Prompt = strings.Repeat("x", MaxPromptBytes+1) }, "prompt: 4097 bytes > limit 4096"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := valid()
			tc.change(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.key) {
				t.Errorf("got %v, want %q", err, tc.key)
			}
			if _, err := New(c, nil, nil); err == nil && tc.name != "no name" { // New defaults the name
				t.Error("New accepted it")
			}
		})
	}
	// Every problem at once.
	err := Config{Capacity: -1}.Validate()
	for _, key := range []string{"name", "url", "model", "capacity", "timeout", "breaker_failures", "breaker_cooldown"} {
		if err == nil || !strings.Contains(err.Error(), key+":") {
			t.Errorf("joined error %v lacks %s", err, key)
		}
	}
}

func TestConfigLogValueRedactsKey(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	c := Config{Endpoint: openai.Endpoint{URL: "http://gpu-box:8000/v1", Model: "whisper-1", APIKey: "sk-secret-value"}}
	c.SetDefaults()
	log.Info("engine", "config", c)
	if strings.Contains(buf.String(), "sk-secret") || !strings.Contains(buf.String(), "config.api_key=REDACTED") ||
		!strings.Contains(buf.String(), "config.model=whisper-1") {
		t.Errorf("log line %s", buf.String())
	}
}

func TestEnginePrompt(t *testing.T) {
	e, err := New(Config{Endpoint: openai.Endpoint{URL: "http://gpu-box/v1", Model: "m"}, Prompt: "Acme"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	tests := []struct{ extra, want string }{
		{"", "Acme"}, {" Zorblax, Quux ", "Acme Zorblax, Quux"},
		{strings.Repeat("é", MaxPromptBytes), "Acme " + strings.Repeat("é", (MaxPromptBytes-5)/2)},
	}
	for _, tc := range tests {
		if got := e.prompt(tc.extra); got != tc.want {
			t.Errorf("prompt(%.20q) = %.40q (%d bytes), want %.40q", tc.extra, got, len(got), tc.want)
		}
	}
}
