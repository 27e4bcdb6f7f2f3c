package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/config"
	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/openai"
	"github.com/earshot-dev/earshot/recognizer/remote"
)

// fakeEmbedded stands in for the sphinx engine in routing tests (routing
// reads only Name and Languages).
type fakeEmbedded struct{}

func (fakeEmbedded) Name() string        { return EmbeddedEngine }
func (fakeEmbedded) Languages() []string { return []string{"en"} }
func (fakeEmbedded) NewStream(context.Context, recognizer.StreamOptions) (recognizer.Stream, error) {
	return nil, errors.New("fake")
}

func testEngines(t *testing.T, c EnginesConfig) *Engines {
	t.Helper()
	c.SetDefaults()
	if err := c.Validate("en"); err != nil {
		t.Fatalf("validate: %v", err)
	}
	e, err := NewEngines(fakeEmbedded{}, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func remoteCfg(name string, langs ...string) remote.Config {
	return remote.Config{Endpoint: openai.Endpoint{URL: "http://127.0.0.1:9/v1", Model: "whisper-1"}, Name: name, Languages: langs}
}

func TestEnginesLanguagesAndInfo(t *testing.T) {
	e := testEngines(t, EnginesConfig{Remote: []remote.Config{remoteCfg("gpu", "fr", "en", "de")}})
	if got := strings.Join(e.Languages(), " "); got != "en fr de" {
		t.Errorf("Languages = %q, want the union, embedded first", got)
	}
	info := e.Info()
	if len(info) != 2 || info[0].Kind != "embedded" || info[1].Name != "gpu" || info[1].Capacity != remote.DefaultCapacity ||
		strings.Join(info[1].Routes, " ") != "model-1 model-3" {
		t.Errorf("Info = %+v", info)
	}
}

func TestEnginesValidate(t *testing.T) {
	tests := []struct {
		name string
		c    EnginesConfig
		want string
	}{
		{"duplicate name", EnginesConfig{Remote: []remote.Config{remoteCfg("sphinx")}}, "already an engine's name"},
		{"unknown model route", EnginesConfig{Routes: RoutesConfig{Model1: "gpu"}}, "routes.model-1"},
		{"unknown language route", EnginesConfig{Routes: RoutesConfig{Languages: map[string]string{"fr": "gpu"}}}, "names no engine"},
		{"route to an engine without the language", EnginesConfig{Routes: RoutesConfig{Languages: map[string]string{"fr": "sphinx"}}}, "does not serve fr"},
		{"bad language", EnginesConfig{Routes: RoutesConfig{Languages: map[string]string{"xx": "sphinx"}}}, "not a language code"},
		{"remote without url", EnginesConfig{Remote: []remote.Config{{Name: "gpu", Endpoint: openai.Endpoint{Model: "m"}}}}, "engines.remote[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.c.SetDefaults()
			err := config.Under("engines", tt.c.Validate("en")) // its keys as the file names them
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestFallbackLanguage(t *testing.T) {
	on := testEngines(t, EnginesConfig{Remote: []remote.Config{remoteCfg("gpu")}, Fallback: true})
	off := testEngines(t, EnginesConfig{Remote: []remote.Config{remoteCfg("gpu")}})
	gpu := on.remotes[0]
	tests := []struct {
		e      *Engines
		rt     Route
		listed []string
		want   string
	}{
		{on, Route{Engine: gpu, Language: "en"}, []string{"en"}, "en"},
		{on, Route{Engine: gpu, Language: "fr"}, []string{"fr"}, ""},
		{on, Route{Engine: gpu}, nil, "en"},
		{on, Route{Engine: gpu}, []string{"en", "fr"}, "en"},
		{on, Route{Engine: gpu}, []string{"de", "fr"}, ""},
		{off, Route{Engine: off.remotes[0], Language: "en"}, []string{"en"}, ""},
	}
	for i, tt := range tests {
		if got := tt.e.fallbackLanguage(tt.rt, tt.listed); got != tt.want {
			t.Errorf("%d: fallbackLanguage = %q, want %q", i, got, tt.want)
		}
	}
}

func TestEngineErrors(t *testing.T) {
	un := engineError("gpu", &remote.StatusError{StatusCode: 503})
	if errcode.Status(un) != 503 || !strings.HasPrefix(errcode.Message(un), "transcription engine gpu unavailable") {
		t.Errorf("unavailable: %d %q", errcode.Status(un), errcode.Message(un))
	}
	if got := errcode.Message(engineError("gpu", fmt.Errorf("dial tcp 10.0.0.1:8000: %w", remote.ErrUnavailable))); got != "transcription engine gpu unavailable" {
		t.Errorf("engine message = %q", got)
	}
	bad := engineError("gpu", remote.ErrBadResponse)
	if errcode.Status(bad) != 500 || errcode.Message(bad) != "transcription engine gpu returned a bad response" {
		t.Errorf("bad response: %d %q", errcode.Status(bad), errcode.Message(bad))
	}
}

// TestRouteEveryCombination walks every model (model-1, model-3, unset,
// and an unknown name, which params rejects before routing and Route
// treats as model-1) × languages (none, one sphinx serves, one only a
// remote engine serves, one nobody serves, several served together, several
// not) × code_switching on four installations, against the README table.
func TestRouteEveryCombination(t *testing.T) {
	setups := map[string]EnginesConfig{
		"embedded": {},
		"gpu":      {Remote: []remote.Config{remoteCfg("gpu", "en", "fr", "de", "es", "it")}},
		"routed": {
			Remote: []remote.Config{remoteCfg("gpu"), remoteCfg("frbox", "fr")},
			Routes: RoutesConfig{Model1: "sphinx", Model3: "gpu", Languages: map[string]string{"fr": "frbox"}},
		},
		"fronly": {Remote: []remote.Config{remoteCfg("frbox", "fr")}},
	}
	langSets := map[string][]string{"none": nil, "en": {"en"}, "fr": {"fr"}, "ja": {"ja"}, "en+fr": {"en", "fr"}, "en+ja": {"en", "ja"}}
	// want[setup][model class][languages] is "engine language" ("" =
	// detection) or "422". The model class is "1" (model-1, unset,
	// unknown) or "3".
	want := map[string]map[string]map[string]string{
		"embedded": {
			"1": {"none": "sphinx en", "en": "sphinx en", "fr": "422", "ja": "422", "en+fr": "422", "en+ja": "422"},
			"3": {"none": "sphinx en", "en": "sphinx en", "fr": "422", "ja": "422", "en+fr": "422", "en+ja": "422"},
		},
		"gpu": {
			"1": {"none": "gpu ", "en": "gpu en", "fr": "gpu fr", "ja": "422", "en+fr": "gpu ", "en+ja": "422"},
			"3": {"none": "gpu ", "en": "gpu en", "fr": "gpu fr", "ja": "422", "en+fr": "gpu ", "en+ja": "422"},
		},
		"routed": {
			"1": {"none": "gpu ", "en": "sphinx en", "fr": "frbox fr", "ja": "gpu ja", "en+fr": "gpu ", "en+ja": "gpu "},
			"3": {"none": "gpu ", "en": "gpu en", "fr": "frbox fr", "ja": "gpu ja", "en+fr": "gpu ", "en+ja": "gpu "},
		},
		"fronly": {
			"1": {"none": "frbox ", "en": "sphinx en", "fr": "frbox fr", "ja": "422", "en+fr": "422", "en+ja": "422"},
			"3": {"none": "frbox ", "en": "sphinx en", "fr": "frbox fr", "ja": "422", "en+fr": "422", "en+ja": "422"},
		},
	}
	models := map[string]string{"model-1": "1", "": "1", "model-x": "1", "model-3": "3"}
	for setup, c := range setups {
		e := testEngines(t, c)
		for model, class := range models {
			for name, langs := range langSets {
				for _, cs := range []bool{false, true} {
					exp := want[setup][class][name]
					rt, err := e.Route(model, langs, cs)
					label := fmt.Sprintf("%s/%q/%s/cs=%v", setup, model, name, cs)
					if exp == "422" {
						if errcode.Status(err) != 422 || !strings.Contains(errcode.Message(err), "installed: sphinx [en]") {
							t.Errorf("%s: got %v (status %d, %q), want 422 listing the engines", label, rt, errcode.Status(err), errcode.Message(err))
						}
						continue
					}
					if err != nil {
						t.Errorf("%s: %v, want %s", label, err, exp)
						continue
					}
					if got := rt.Engine.Name() + " " + rt.Language; got != exp {
						t.Errorf("%s: got %q, want %q", label, got, exp)
					}
					if wantPer := cs && rt.Language == ""; rt.PerUtterance != wantPer {
						t.Errorf("%s: PerUtterance %v, want %v", label, rt.PerUtterance, wantPer)
					}
				}
			}
		}
	}
}
