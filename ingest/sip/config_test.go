package sip

import (
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/config"
)

func TestConfigValidate(t *testing.T) {
	good := func() Config {
		return Config{Listen: "127.0.0.1:5070", Allow: []string{"127.0.0.0/8", "10.1.2.3"},
			Routes: []Route{{User: "transcribe", Account: "default", Live: map[string]any{"language_config": map[string]any{"languages": []any{"en"}}}}}}
	}
	cases := []struct {
		name string
		edit func(*Config)
		want string // substring of the error, "" for valid
	}{
		{"valid", func(*Config) {}, ""},
		{"door off needs no allow", func(c *Config) { c.Listen, c.Allow = "", nil }, ""},
		{"allow required", func(c *Config) { c.Allow = nil }, "sip.allow"},
		{"bad cidr", func(c *Config) { c.Allow = []string{"10.0.0.0/33"} }, "sip.allow"},
		{"ports", func(c *Config) { c.RTPPorts = "20000" }, "sip.rtp_ports"},
		{"range too small for calls", func(c *Config) { c.RTPPorts, c.MaxCalls = "20000-20009", 10 }, "max_calls 10"},
		{"advertise", func(c *Config) { c.AdvertiseIP = "host" }, "sip.advertise_ip"},
		{"route account", func(c *Config) { c.Routes[0].Account = "" }, "sip.routes[0].account"},
		{"door field", func(c *Config) { c.Routes[0].Live["encoding"] = "wav/pcm" }, "sip.routes[0].live.encoding"},
		{"live and options", func(c *Config) { c.Routes[0].Options = map[string]any{} }, "not both"},
		{"route without live options", func(c *Config) { c.Routes[0].Live = nil }, ""},
		{"bad live option", func(c *Config) { c.Routes[0].Live["endpointing"] = 99 }, "sip.routes[0].live: endpointing"},
		{"unknown live option", func(c *Config) { c.Routes[0].Live["languages"] = "en" }, "sip.routes[0].live: languages"},
		{"repeated user", func(c *Config) { c.Routes = append(c.Routes, c.Routes[0]) }, "sip.routes[1].user"},
		{"pause by DTMF", func(c *Config) {
			c.Routes[0].Live["pci"] = map[string]any{"pause_sequence": "*1", "resume_sequence": "#2", "mask_dtmf": true}
		}, ""},
		{"pause sequence not DTMF", func(c *Config) { c.Routes[0].Live["pci"] = map[string]any{"pause_sequence": "*1x"} }, "sip.routes[0].live: pci.pause_sequence must be DTMF digits"},
		{"resume sequence too long", func(c *Config) { c.Routes[0].Live["pci"] = map[string]any{"resume_sequence": "123456789"} }, "sip.routes[0].live: pci.resume_sequence must be 1 to 8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := good()
			c.edit(&cfg)
			cfg.SetDefaults()
			err := config.Under("sip", cfg.Validate()) // its keys as the file names them
			if c.want == "" && err != nil {
				t.Fatalf("unexpected %v", err)
			}
			if c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Fatalf("err %v, want one naming %q", err, c.want)
			}
		})
	}
}

// TestConfigLatchingDefault: sip.rtp_latching is on unless set false.
func TestConfigLatchingDefault(t *testing.T) {
	var c Config
	c.SetDefaults()
	if !c.latching() || c.RTPLatching == nil || !*c.RTPLatching {
		t.Fatalf("rtp_latching defaults to %v, want true", c.RTPLatching)
	}
	off := false
	c = Config{RTPLatching: &off}
	c.SetDefaults()
	if c.latching() {
		t.Fatal("rtp_latching false was turned on")
	}
}
