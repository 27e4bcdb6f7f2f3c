package pipeline

import (
	"errors"
	"fmt"
	"slices"

	"github.com/earshot-dev/earshot/config"
	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer/addons/llm"
	"github.com/earshot-dev/earshot/recognizer/remote"
)

// EnginesConfig is the engines: section: the remote recognisers beside the
// embedded one, how requests are routed to them, and the fallback policy.
type EnginesConfig struct {
	// Remote lists OpenAI-compatible transcription servers, each an engine
	// named by its name (unique, not "sphinx").
	Remote []remote.Config `yaml:"remote"`
	// Routes maps models and languages to engines (see Engines.Route).
	Routes RoutesConfig `yaml:"routes"`
	// Fallback, when true, re-runs a pre-recorded job on the embedded
	// engine when its remote engine fails and the job's language is one
	// the embedded engine serves, and moves a live session to the
	// embedded engine at its first failed utterance (that utterance
	// included) for the rest of the session; post_session_metadata says
	// so. Default false (the job fails with the remote engine's error; a
	// live session gets an error message per failed utterance).
	Fallback bool `yaml:"fallback"`
}

// RoutesConfig names the engine of each model and language; empty means
// the default order (see Engines.Route).
type RoutesConfig struct {
	// Model1 is the engine of model-1 requests.
	Model1 string `yaml:"model-1"`
	// Model3 is the engine of model-3 requests.
	Model3 string `yaml:"model-3"`
	// Languages maps a language code to the engine that transcribes it,
	// whatever the model; it wins over Model1 and Model3.
	Languages map[string]string `yaml:"languages"`
}

// SetDefaults fills each remote engine's zero fields.
func (c *EnginesConfig) SetDefaults() {
	for i := range c.Remote {
		c.Remote[i].SetDefaults()
	}
}

// Validate checks names and routes without I/O, each problem a
// *config.Problem naming its key (relative to this section); sphinxLang is
// the embedded engine's language.
func (c *EnginesConfig) Validate(sphinxLang string) error {
	var errs []error
	bad := func(key, format string, a ...any) { errs = append(errs, config.Errorf(key, format, a...)) }
	langs := map[string][]string{EmbeddedEngine: {sphinxLang}}
	for i, r := range c.Remote {
		errs = append(errs, config.Under(fmt.Sprintf("remote[%d]", i), r.Validate()))
		if _, dup := langs[r.Name]; dup {
			bad(fmt.Sprintf("remote[%d].name", i), "%q is already an engine's name", r.Name)
		}
		langs[r.Name] = r.Languages
	}
	for key, name := range map[string]string{"routes.model-1": c.Routes.Model1, "routes.model-3": c.Routes.Model3} {
		if _, ok := langs[name]; name != "" && !ok {
			bad(key, "%q names no engine", name)
		}
	}
	for lang, name := range c.Routes.Languages {
		served, ok := langs[name]
		switch {
		case !params.IsLanguage(lang):
			bad("routes.languages", "%q is not a language code", lang)
		case !ok:
			bad("routes.languages."+lang, "%q names no engine", name)
		case !slices.Contains(served, lang):
			bad("routes.languages."+lang, "engine %q does not serve %s", name, lang)
		}
	}
	return config.Sorted(errors.Join(errs...)) // by key: the routes come in map order
}

// AddonsConfig configures the add-ons of SPEC 2.4 and 2.7. Every add-on that
// rules can do runs on the box without settings; the ones that need a
// language model (translation, audio_to_llm, abstractive summarization) use
// the LLM backend when its url is set, and otherwise report 501
// NotConfigured in their envelope while the job succeeds.
type AddonsConfig struct {
	// LLM is an OpenAI-compatible chat-completions server (llama.cpp
	// server, vLLM, Ollama). Default: none.
	LLM llm.Config `yaml:"llm"`
}

// SetDefaults fills zero fields.
func (c *AddonsConfig) SetDefaults() { c.LLM.SetDefaults() }

// Validate checks the section without I/O, joining every problem, each a
// *config.Problem naming its key (relative to this section).
func (c *AddonsConfig) Validate() error { return config.Under("llm", c.LLM.Validate()) }
