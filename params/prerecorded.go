package params

import (
	"net/url"

	"github.com/earshot-dev/earshot/internal/jsonobject"
)

// PreRecorded is the decoded pre-recorded body (SPEC 2.4). Optional fields are
// pointers/nil when absent. It marshals back to JSON (contract field names,
// omitempty) as the job's request_params, with defaults filled in: model
// "model-1", language_config {languages: [], code_switching: false}, and the
// config objects of subtitles, summarization and pii_redaction with their
// defaults when those are enabled without one (or given partly).
type PreRecorded struct {
	AudioURL string `json:"audio_url"`
	Model    string `json:"model"`
	// CustomVocabulary is true if the array form was given; its items are
	// then in CustomVocabularyConfig.
	CustomVocabulary       *bool             `json:"custom_vocabulary,omitempty"`
	CustomVocabularyConfig *VocabularyConfig `json:"custom_vocabulary_config,omitempty"`
	// CallbackURL is deprecated: use Callback and CallbackConfig.
	CallbackURL            string               `json:"callback_url,omitempty"`
	Callback               bool                 `json:"callback"`
	CallbackConfig         *CallbackConfig      `json:"callback_config,omitempty"`
	Subtitles              bool                 `json:"subtitles"`
	SubtitlesConfig        *SubtitlesConfig     `json:"subtitles_config,omitempty"`
	Diarization            bool                 `json:"diarization"`
	DiarizationConfig      *DiarizationConfig   `json:"diarization_config,omitempty"`
	Translation            bool                 `json:"translation"`
	TranslationConfig      *TranslationConfig   `json:"translation_config,omitempty"`
	Summarization          bool                 `json:"summarization"`
	SummarizationConfig    *SummarizationConfig `json:"summarization_config,omitempty"`
	NamedEntityRecognition bool                 `json:"named_entity_recognition"`
	CustomSpelling         bool                 `json:"custom_spelling"`
	CustomSpellingConfig   *SpellingConfig      `json:"custom_spelling_config,omitempty"`
	SentimentAnalysis      bool                 `json:"sentiment_analysis"`
	AudioToLLM             bool                 `json:"audio_to_llm"`
	AudioToLLMConfig       *AudioToLLMConfig    `json:"audio_to_llm_config,omitempty"`
	PIIRedaction           bool                 `json:"pii_redaction"`
	PIIRedactionConfig     *PIIRedactionConfig  `json:"pii_redaction_config,omitempty"`
	// CustomMetadata is free-form; numbers are json.Number; nil when
	// absent or empty.
	CustomMetadata      jsonobject.Object `json:"custom_metadata,omitempty"`
	Sentences           bool              `json:"sentences"`
	PunctuationEnhanced bool              `json:"punctuation_enhanced"`
	LanguageConfig      LanguageConfig    `json:"language_config"`
}

// Language returns the single language to transcribe in ("" = detect).
func (p *PreRecorded) Language() string {
	return p.LanguageConfig.Language()
}

// CallbackTarget returns where and how the result is delivered:
// callback_config.url when callback is true (method from config, default
// POST), else the deprecated callback_url (POST), else ok=false.
func (p *PreRecorded) CallbackTarget() (url, method string, ok bool) {
	if p.Callback && p.CallbackConfig != nil && p.CallbackConfig.URL != "" {
		method = p.CallbackConfig.Method
		if method == "" {
			method = MethodPOST
		}
		return p.CallbackConfig.URL, method, true
	}
	if p.CallbackURL != "" {
		return p.CallbackURL, MethodPOST, true
	}
	return "", "", false
}

// DecodePreRecorded decodes and validates a pre-recorded initiation body. It
// returns a *ValidationError listing every malformed field (400), else an
// error wrapping ErrCannotServe when c cannot serve the request (422), else
// the decoded body with its defaults filled in. The body size is the
// caller's to bound.
func DecodePreRecorded(body []byte, c Capabilities) (*PreRecorded, error) {
	return decodePreRecorded(body, &c)
}

// decodePreRecorded is DecodePreRecorded; a nil c skips the checks of what
// the appliance can serve (422), as StoredPreRecorded does.
func decodePreRecorded(body []byte, c *Capabilities) (*PreRecorded, error) {
	var p problems
	o, ok := root(&p, body)
	if !ok {
		return nil, p.err()
	}
	r := &PreRecorded{Model: Model1}

	var audio *url.URL
	if !o.has("audio_url") {
		o.take("audio_url")
		p.addf("audio_url", "is required")
	} else if s, path, ok := o.str("audio_url"); ok {
		if s == "" {
			p.addf(path, "is required")
		} else if u, ok := parseAbsURL(&p, path, s); ok {
			r.AudioURL, audio = s, u
		}
	}
	if s, path, ok := o.str("model"); ok && oneOf(&p, path, s, Model1, Model3) {
		r.Model = s
	}

	// custom_vocabulary is a boolean, or (older form) the vocabulary itself.
	vocabPresent := o.has("custom_vocabulary_config")
	var vocabItems []VocabularyItem
	if raw, path, ok := o.take("custom_vocabulary"); ok {
		switch kindOf(raw) {
		case kindBool:
			b, _ := asBool(&p, path, raw)
			r.CustomVocabulary = &b
		case kindArray:
			if items, ok := decodeVocabulary(&p, path, raw); ok {
				vocabItems = items
				t := true
				r.CustomVocabulary = &t
			}
			if vocabPresent {
				p.addf(path, "must be a boolean when custom_vocabulary_config is given")
			}
		default:
			p.addf(path, "must be a boolean or an array")
		}
	}
	r.CustomVocabularyConfig = decodeVocabularyConfig(o)
	if vocabItems != nil && !vocabPresent {
		r.CustomVocabularyConfig = &VocabularyConfig{Vocabulary: vocabItems}
	}
	if r.CustomVocabulary != nil && *r.CustomVocabulary && !vocabPresent && vocabItems == nil {
		p.addf("custom_vocabulary_config", "is required when custom_vocabulary is true")
	}

	if s, path, ok := o.str("callback_url"); ok && httpURL(&p, path, s) {
		r.CallbackURL = s
	}
	r.Callback = o.boolean("callback", false)
	cbPresent := o.has("callback_config")
	var urlGiven bool
	r.CallbackConfig, urlGiven = decodeCallbackConfig(o)
	if r.Callback && (r.CallbackConfig != nil || !cbPresent) {
		requireURL(&p, urlGiven)
	}

	r.Subtitles = o.boolean("subtitles", false)
	r.SubtitlesConfig = decodeSubtitlesConfig(o)
	if r.Subtitles && r.SubtitlesConfig == nil {
		r.SubtitlesConfig = defaultSubtitlesConfig()
	}

	r.Diarization = o.boolean("diarization", false)
	r.DiarizationConfig = decodeDiarizationConfig(o)

	r.Translation = o.boolean("translation", false)
	present := o.has("translation_config")
	r.TranslationConfig = decodeTranslationConfig(o)
	if r.Translation && !present {
		p.addf("translation_config", "is required when translation is true")
	}

	r.Summarization = o.boolean("summarization", false)
	if sc, ok := decodeSummarizationConfig(o); ok || r.Summarization {
		r.SummarizationConfig = &sc
	}

	r.NamedEntityRecognition = o.boolean("named_entity_recognition", false)

	r.CustomSpelling = o.boolean("custom_spelling", false)
	present = o.has("custom_spelling_config")
	r.CustomSpellingConfig = decodeSpellingConfig(o)
	if r.CustomSpelling && !present {
		p.addf("custom_spelling_config", "is required when custom_spelling is true")
	}

	r.SentimentAnalysis = o.boolean("sentiment_analysis", false)

	r.AudioToLLM = o.boolean("audio_to_llm", false)
	present = o.has("audio_to_llm_config")
	r.AudioToLLMConfig = decodeAudioToLLMConfig(o)
	if r.AudioToLLM {
		if !present {
			p.addf("audio_to_llm_config", "is required when audio_to_llm is true")
		} else if c := r.AudioToLLMConfig; c != nil && len(c.Prompts) == 0 && !p.reported("audio_to_llm_config.prompts") {
			p.addf("audio_to_llm_config.prompts", "must have at least 1 item when audio_to_llm is true")
		}
	}

	r.PIIRedaction = o.boolean("pii_redaction", false)
	r.PIIRedactionConfig = decodePIIRedactionConfig(o)
	if r.PIIRedaction && r.PIIRedactionConfig == nil {
		r.PIIRedactionConfig = defaultPIIRedactionConfig()
	}

	r.CustomMetadata = decodeMetadata(o)
	r.Sentences = o.boolean("sentences", false)
	r.PunctuationEnhanced = o.boolean("punctuation_enhanced", false)
	r.LanguageConfig = decodeLanguageConfig(&p, o)
	o.done()
	if err := p.err(); err != nil {
		return nil, err
	}

	if c == nil {
		return r, nil
	}
	// 422: well-formed, but not something this appliance can serve.
	if audio.Scheme != "http" && audio.Scheme != "https" {
		return nil, cannotServe("audio_url scheme %q is not supported (use http, https or a file from /v2/upload)",
			truncate(audio.Scheme, 16))
	}
	if id, ok := FileID(r.AudioURL); ok && c.LocalFile != nil && !c.LocalFile(id) {
		return nil, cannotServe("audio_url names no uploaded file (id %q)", truncate(id, 64))
	}
	if err := c.checkLanguages(r.Model, r.LanguageConfig); err != nil {
		return nil, err
	}
	if err := c.checkAddonLanguages(r.LanguageConfig, r.addonSwitches()); err != nil {
		return nil, err
	}
	if err := refusePreRecorded(r); err != nil {
		return nil, err
	}
	return r, nil
}
