package sip

import (
	"context"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/earshot-dev/earshot/ingest"
)

// noOpener opens nothing: New needs an opener, these tests no call.
type noOpener struct{}

func (noOpener) OpenLive(context.Context, ingest.LiveRequest) (ingest.Session, error) {
	return nil, ingest.ErrAtCapacity
}

// TestRouteOptionsDecodedOnce: a route's live options are decoded when the
// configuration is loaded (SetDefaults), and the door hands that value to
// its calls; neither Validate nor New decodes them again (before, Validate
// and New each ran params.DecodeLiveOptions).
func TestRouteOptionsDecodedOnce(t *testing.T) {
	const file = `
listen: 127.0.0.1:0
allow: [127.0.0.0/8]
rtp_ports: 31000-31099
routes:
  - user: transcribe
    account: a
    live: {endpointing: 0.3, language_config: {languages: [en]}}
  - user: plain
    account: b
`
	var cfg Config
	if err := yaml.Unmarshal([]byte(file), &cfg); err != nil {
		t.Fatal(err)
	}
	cfg.SetDefaults() // the configuration's load (app.Config.SetDefaults)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	first, plain := cfg.Routes[0].live, cfg.Routes[1].live
	if first == nil || first.Endpointing.Silence.D().Milliseconds() != 300 || first.Language() != "en" {
		t.Fatalf("route options decoded as %+v", first)
	}
	if plain == nil || !plain.PCI.InbandDTMF {
		t.Fatalf("route without options: %+v, want every default of a door's session", plain)
	}
	s, err := New(cfg, noOpener{}, nil) // SetDefaults and Validate again, on its copy
	if err != nil {
		t.Fatal(err)
	}
	if s.routes[0].live != first || s.routes[1].live != plain {
		t.Errorf("the door decoded the routes' options again: %p %p, loaded %p %p", s.routes[0].live, s.routes[1].live, first, plain)
	}
}

// TestRouteOptionsUndecoded: Validate refuses a route whose options were
// never decoded (SetDefaults not called), rather than hand calls nothing.
func TestRouteOptionsUndecoded(t *testing.T) {
	r := Route{User: "x", Account: "a"}
	if err := r.optionsErr(); err != errOptionsUndecoded {
		t.Errorf("undecoded route: %v", err)
	}
	r.decodeOptions()
	if err := r.optionsErr(); err != nil || r.live == nil {
		t.Errorf("decoded route: %+v, %v", r.live, err)
	}
}
