package params

// AudioToLLMConfig is audio_to_llm_config. Prompts is required, with 1 to
// MaxPrompts non-empty prompts of at most MaxPromptLength bytes, when
// audio_to_llm is true. Model names a model of the configured LLM backend
// (free-form, at most MaxWordLength bytes; "" = the backend's default).
type AudioToLLMConfig struct {
	Prompts []string `json:"prompts"`
	Model   string   `json:"model,omitempty"`
}

func decodeAudioToLLMConfig(parent *object) *AudioToLLMConfig {
	o, ok := parent.object("audio_to_llm_config")
	if !ok {
		return nil
	}
	defer o.done()
	c := &AudioToLLMConfig{Prompts: []string{}}
	if ps, _, ok := o.strings("prompts", MaxPrompts, func(path, s string) (string, bool) {
		return s, word(o.p, path, s, MaxPromptLength)
	}); ok {
		c.Prompts = ps
	}
	if s, path, ok := o.str("model"); ok && (s == "" || word(o.p, path, s, MaxWordLength)) {
		c.Model = s
	}
	return c
}
