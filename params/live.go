package params

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/earshot-dev/earshot/internal/jsonobject"
)

// Live audio encodings (SPEC 2.3).
const (
	EncodingPCM  = "wav/pcm"
	EncodingALaw = "wav/alaw"
	EncodingULaw = "wav/ulaw"
)

// Live defaults and bounds (SPEC 2.3, 8).
const (
	DefaultBitDepth        = 16
	DefaultSampleRate      = 16000
	DefaultChannels        = 1
	DefaultSpeechThreshold = 0.6
	MaxChannels            = 8
)

var (
	bitDepths   = []int{8, 16, 24, 32}
	sampleRates = []int{8000, 16000, 32000, 44100, 48000}
)

// Live is the decoded live initiation body (SPEC 2.3) with every default of
// SPEC 2.3 and section 6 filled in: messages_config defaults are the
// WebSocket column, callback_config defaults the callback column. It marshals
// back to JSON (contract field names) as the job's request_params.
type Live struct {
	// Encoding is wav/pcm (default), wav/alaw or wav/ulaw.
	Encoding string `json:"encoding"`
	// BitDepth is 8, 16 (default), 24 or 32 for wav/pcm; always 8 for
	// wav/alaw and wav/ulaw (their default; any other value is a 400).
	BitDepth int `json:"bit_depth"`
	// SampleRate is 8000, 16000 (default), 32000, 44100 or 48000 Hz.
	SampleRate int `json:"sample_rate"`
	// Channels is 1 (default) to 8, interleaved.
	Channels int `json:"channels"`
	// Model is model-1 (model-3 is refused with a 422).
	Model string `json:"model"`
	// Endpointing is endpointing and maximum_duration_without_endpointing,
	// decoded and bounded (embedded: its fields are the body's).
	Endpointing
	LanguageConfig     LanguageConfig     `json:"language_config"`
	PreProcessing      PreProcessing      `json:"pre_processing"`
	RealtimeProcessing RealtimeProcessing `json:"realtime_processing"`
	PostProcessing     PostProcessing     `json:"post_processing"`
	MessagesConfig     MessageSwitches    `json:"messages_config"`
	// Callback sends the messages selected by CallbackConfig to its URL.
	Callback       bool               `json:"callback"`
	CallbackConfig LiveCallbackConfig `json:"callback_config"`
	// CustomMetadata is free-form; numbers are json.Number; nil when
	// absent or empty.
	CustomMetadata jsonobject.Object `json:"custom_metadata,omitempty"`
	// PCI is this appliance's payment-card option (not in SPEC).
	PCI PCI `json:"pci,omitzero"`
	// PIIRedaction redacts personal data from every message, the record
	// and the recording, as pii_redaction does for a pre-recorded job (an
	// earshot extension: SPEC 2.3 has none). PIIRedactionConfig is
	// pre-recorded's pii_redaction_config, defaults filled in when
	// PIIRedaction is true.
	PIIRedaction       bool                `json:"pii_redaction,omitempty"`
	PIIRedactionConfig *PIIRedactionConfig `json:"pii_redaction_config,omitempty"`
}

// PCI is the live pci object: how a session keeps card digits out of its
// recording and transcript (PROTOCOL.md, Pausing).
type PCI struct {
	// StartPaused starts the session paused (an IVR's payment leg): its
	// audio is stored and recognised as silence until it is resumed.
	StartPaused bool `json:"start_paused"`
	// DTMFInClear is pci.mask_dtmf false. Masked (the zero value, and
	// mask_dtmf's default) keeps the digits of the call's DTMF keys out of
	// every message, the record and the logs: a dtmf message says that a
	// key was pressed, when and how long, never which (PROTOCOL.md, DTMF).
	// Inverted so that params stored before the field existed, or any PCI
	// built in code, mask. PCI's MarshalJSON and UnmarshalJSON write and
	// read it (the tags here name the request's fields, and are not used).
	DTMFInClear bool `json:"mask_dtmf"`
	// PauseSequence and ResumeSequence, when set, pause and resume the
	// session when its keys (any source) spell them: DTMF digits, at most
	// MaxDTMFSequence of them (PROTOCOL.md, Pausing).
	PauseSequence  string `json:"pause_sequence,omitempty"`
	ResumeSequence string `json:"resume_sequence,omitempty"`
	// InbandDTMF detects DTMF keys sent as tones in the session's audio,
	// and removes them (silence) from the audio the recogniser hears and
	// the recording stores (PROTOCOL.md, DTMF keys). pci.inband_dtmf:
	// default true for a door's sessions (a SIP route's options), false
	// for POST /v2/live; only for telephone audio (InbandFormat).
	InbandDTMF bool `json:"inband_dtmf"`
}

// InbandFormat reports whether the session's audio format is one the
// in-band DTMF detector takes: 8 kHz mu-law or A-law (G.711), 16-bit PCM
// at 8 or 16 kHz (G.722 once decoded).
func (l *Live) InbandFormat() bool {
	switch l.Encoding {
	case EncodingULaw, EncodingALaw:
		return l.SampleRate == 8000
	case EncodingPCM:
		return l.BitDepth == 16 && (l.SampleRate == 8000 || l.SampleRate == 16000)
	}
	return false
}

// pciJSON is PCI as JSON: mask_dtmf is !DTMFInClear, true when absent.
type pciJSON struct {
	StartPaused    bool   `json:"start_paused"`
	MaskDTMF       *bool  `json:"mask_dtmf,omitempty"`
	PauseSequence  string `json:"pause_sequence,omitempty"`
	ResumeSequence string `json:"resume_sequence,omitempty"`
	InbandDTMF     bool   `json:"inband_dtmf,omitempty"`
}

// MarshalJSON writes mask_dtmf only when false (request_params of a
// session that asked for digits in clear).
func (c PCI) MarshalJSON() ([]byte, error) {
	v := pciJSON{StartPaused: c.StartPaused, PauseSequence: c.PauseSequence, ResumeSequence: c.ResumeSequence, InbandDTMF: c.InbandDTMF}
	if c.DTMFInClear {
		v.MaskDTMF = new(bool)
	}
	return json.Marshal(v)
}

// UnmarshalJSON reads what MarshalJSON wrote (stored request_params).
func (c *PCI) UnmarshalJSON(b []byte) error {
	var v pciJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*c = PCI{StartPaused: v.StartPaused, DTMFInClear: v.MaskDTMF != nil && !*v.MaskDTMF, PauseSequence: v.PauseSequence, ResumeSequence: v.ResumeSequence, InbandDTMF: v.InbandDTMF}
	return nil
}

// MaxDTMFSequence bounds pci.pause_sequence and pci.resume_sequence.
const MaxDTMFSequence = 8

// PreProcessing is the live pre_processing object.
type PreProcessing struct {
	AudioEnhancer bool `json:"audio_enhancer"`
	// SpeechThreshold is 0 to 1, default 0.6; closer to 1 is stricter
	// against background sound.
	SpeechThreshold float64 `json:"speech_threshold"`
}

// RealtimeProcessing is the live realtime_processing object (SPEC 2.7). A
// config is nil when not given; it is required when its switch is true.
type RealtimeProcessing struct {
	CustomVocabulary       bool               `json:"custom_vocabulary"`
	CustomVocabularyConfig *VocabularyConfig  `json:"custom_vocabulary_config,omitempty"`
	CustomSpelling         bool               `json:"custom_spelling"`
	CustomSpellingConfig   *SpellingConfig    `json:"custom_spelling_config,omitempty"`
	Translation            bool               `json:"translation"`
	TranslationConfig      *TranslationConfig `json:"translation_config,omitempty"`
	NamedEntityRecognition bool               `json:"named_entity_recognition"`
	SentimentAnalysis      bool               `json:"sentiment_analysis"`
}

// PostProcessing is the live post_processing object.
type PostProcessing struct {
	Summarization       bool                `json:"summarization"`
	SummarizationConfig SummarizationConfig `json:"summarization_config"`
	Chapterization      bool                `json:"chapterization"`
}

// Language returns the single language to transcribe in ("" = detect).
func (l *Live) Language() string {
	return l.LanguageConfig.Language()
}

// CallbackTarget returns where and how messages are delivered when callback
// is true, else ok=false.
func (l *Live) CallbackTarget() (url, method string, ok bool) {
	if !l.Callback || l.CallbackConfig.URL == "" {
		return "", "", false
	}
	return l.CallbackConfig.URL, l.CallbackConfig.Method, true
}

// DecodeLive decodes and validates a live initiation body. It returns a
// *ValidationError listing every malformed field (400), else an error
// wrapping ErrCannotServe when c cannot serve the request (422: model-3, a
// language no engine serves), else the decoded body with every default
// filled in. An empty body is {} (all defaults).
func DecodeLive(body []byte, c Capabilities) (*Live, error) {
	return decodeLive(body, &c)
}

// DecodeLiveOptions decodes and validates a door's live options (a SIP
// route's): the fields of a POST /v2/live body, with DecodeLive's problems
// (400, then 422) except the languages, which the job service checks
// against its engines when it opens the session (CheckLanguages). The
// audio format is the door's: it sets it with SetFormat.
func DecodeLiveOptions(opts map[string]any) (*Live, error) {
	if opts == nil {
		opts = map[string]any{} // none: every default
	}
	body, err := json.Marshal(opts)
	if err != nil {
		return nil, &ValidationError{Problems: []string{"body is not valid JSON: " + err.Error()}}
	}
	l, err := decodeLive(body, nil)
	if err != nil {
		return nil, err
	}
	// A call's in-band DTMF is on unless its route turns it off.
	if pci, _ := opts["pci"].(map[string]any); pci == nil || pci["inband_dtmf"] == nil {
		l.PCI.InbandDTMF = true
	}
	return l, nil
}

// CheckLanguages returns an error wrapping ErrCannotServe when c has no
// engine for the session's model and languages, or when an add-on it
// enables reads none of its languages (DecodeLive's 422).
func (l *Live) CheckLanguages(c Capabilities) error {
	if err := c.checkLanguages(l.Model, l.LanguageConfig); err != nil {
		return err
	}
	return c.checkAddonLanguages(l.LanguageConfig, l.addonSwitches())
}

// SetFormat sets the audio format a door writes, validated as DecodeLive
// validates those fields: a *ValidationError naming each bad one.
func (l *Live) SetFormat(encoding string, bitDepth, sampleRate, channels int) error {
	var p problems
	if oneOf(&p, "encoding", encoding, EncodingPCM, EncodingALaw, EncodingULaw) {
		l.Encoding = encoding
	}
	switch {
	case encoding != EncodingPCM && bitDepth != 8:
		p.addf("bit_depth", "must be 8 for %s", encoding)
	case oneOfInt(&p, "bit_depth", float64(bitDepth), bitDepths):
		l.BitDepth = bitDepth
	}
	if oneOfInt(&p, "sample_rate", float64(sampleRate), sampleRates) {
		l.SampleRate = sampleRate
	}
	if inRange(&p, "channels", float64(channels), 1, MaxChannels) {
		l.Channels = channels
	}
	return p.err()
}

// decodeLive is DecodeLive; a nil c leaves the languages unchecked.
func decodeLive(body []byte, c *Capabilities) (*Live, error) {
	var p problems
	o, ok := root(&p, body)
	if !ok {
		return nil, p.err()
	}
	l := &Live{
		Encoding:       EncodingPCM,
		BitDepth:       DefaultBitDepth,
		SampleRate:     DefaultSampleRate,
		Channels:       DefaultChannels,
		Model:          Model1,
		PreProcessing:  PreProcessing{SpeechThreshold: DefaultSpeechThreshold},
		PostProcessing: PostProcessing{SummarizationConfig: SummarizationConfig{Type: SummaryGeneral}},
		MessagesConfig: WebSocketDefaults(),
	}
	if s, path, ok := o.str("encoding"); ok && oneOf(&p, path, s, EncodingPCM, EncodingALaw, EncodingULaw) {
		l.Encoding = s
	}
	if l.Encoding != EncodingPCM {
		l.BitDepth = 8 // G.711 is 8 bits a sample
	}
	if f, path, ok := o.number("bit_depth"); ok {
		switch {
		case l.Encoding != EncodingPCM && f != 8:
			p.addf(path, "must be 8 for %s", l.Encoding)
		case oneOfInt(&p, path, f, bitDepths):
			l.BitDepth = int(f)
		}
	}
	if f, path, ok := o.number("sample_rate"); ok && oneOfInt(&p, path, f, sampleRates) {
		l.SampleRate = int(f)
	}
	if n, path, ok := o.integer("channels"); ok && inRange(&p, path, float64(n), 1, MaxChannels) {
		l.Channels = n
	}
	if s, path, ok := o.str("model"); ok && oneOf(&p, path, s, Model1, Model3) {
		l.Model = s
	}
	decodeEndpointing(&p, o, &l.Endpointing)
	l.LanguageConfig = decodeLanguageConfig(&p, o)

	if po, ok := o.object("pre_processing"); ok {
		l.PreProcessing.AudioEnhancer = po.boolean("audio_enhancer", false)
		if f, path, ok := po.number("speech_threshold"); ok && inRange(&p, path, f, 0, 1) {
			l.PreProcessing.SpeechThreshold = f
		}
		po.done()
	}
	if ro, ok := o.object("realtime_processing"); ok {
		l.RealtimeProcessing = decodeRealtime(&p, ro)
		ro.done()
	}
	if po, ok := o.object("post_processing"); ok {
		l.PostProcessing.Summarization = po.boolean("summarization", false)
		l.PostProcessing.SummarizationConfig, _ = decodeSummarizationConfig(po)
		l.PostProcessing.Chapterization = po.boolean("chapterization", false)
		po.done()
	}
	var preAsked []string // switches asking for pre-processing events (422)
	if mo, ok := o.object("messages_config"); ok {
		preAsked = append(preAsked, decodeSwitches(mo, &l.MessagesConfig))
		mo.done()
	}
	l.Callback = o.boolean("callback", false)
	cbPresent := o.has("callback_config")
	cbIsObject := kindOf(o.fields["callback_config"]) == kindObject
	var urlGiven bool
	var cbPre string
	l.CallbackConfig, urlGiven, cbPre = decodeLiveCallbackConfig(o)
	preAsked = append(preAsked, cbPre)
	if l.Callback && (cbIsObject || !cbPresent) {
		requireURL(&p, urlGiven)
	}
	l.CustomMetadata = decodeMetadata(o)
	if po, ok := o.object("pci"); ok {
		l.PCI.StartPaused = po.boolean("start_paused", false)
		// Off unless asked; a SIP route's default is on (DecodeLiveOptions).
		l.PCI.InbandDTMF = po.boolean("inband_dtmf", false)
		l.PCI.DTMFInClear = !po.boolean("mask_dtmf", true)
		l.PCI.PauseSequence = dtmfSequence(&p, po, "pause_sequence")
		l.PCI.ResumeSequence = dtmfSequence(&p, po, "resume_sequence")
		if l.PCI.PauseSequence != "" && l.PCI.PauseSequence == l.PCI.ResumeSequence {
			p.addf(child(po.path, "resume_sequence"), "must differ from pause_sequence")
		}
		po.done()
	}
	l.PIIRedaction = o.boolean("pii_redaction", false)
	if l.PIIRedactionConfig = decodePIIRedactionConfig(o); l.PIIRedaction && l.PIIRedactionConfig == nil {
		l.PIIRedactionConfig = defaultPIIRedactionConfig()
	}
	o.done()
	if err := p.err(); err != nil {
		return nil, err
	}

	// 422: well-formed, but not something this appliance can serve.
	if l.Model == Model3 {
		return nil, cannotServe("model-3 is not available for live (use model-1)")
	}
	if c != nil {
		if err := l.CheckLanguages(*c); err != nil {
			return nil, err
		}
		if l.PCI.InbandDTMF && !l.InbandFormat() {
			return nil, cannotServe("pci.inband_dtmf needs telephone audio: wav/ulaw or wav/alaw at 8000 Hz, or 16-bit wav/pcm at 8000 or 16000 Hz")
		}
	}
	if err := refuseTranslation("realtime_processing.translation_config", l.RealtimeProcessing.TranslationConfig); err != nil {
		return nil, err
	}
	for _, path := range preAsked {
		if path != "" {
			return nil, cannotServe("%s true: this appliance's pre-processing (pre_processing.audio_enhancer, speech_threshold) sends no messages of its own; "+
				"speech detection is reported by receive_speech_events (leave the switch out or set it false)", path)
		}
	}
	return l, nil
}

// decodeRealtime reads the fields of realtime_processing (SPEC 2.7).
func decodeRealtime(p *problems, o *object) RealtimeProcessing {
	var r RealtimeProcessing
	required := func(on bool, present bool, name, sw string) {
		if on && !present {
			p.addf(child(o.path, name), "is required when %s is true", child(o.path, sw))
		}
	}
	r.CustomVocabulary = o.boolean("custom_vocabulary", false)
	present := o.has("custom_vocabulary_config")
	r.CustomVocabularyConfig = decodeVocabularyConfig(o)
	required(r.CustomVocabulary, present, "custom_vocabulary_config", "custom_vocabulary")

	r.CustomSpelling = o.boolean("custom_spelling", false)
	present = o.has("custom_spelling_config")
	r.CustomSpellingConfig = decodeSpellingConfig(o)
	required(r.CustomSpelling, present, "custom_spelling_config", "custom_spelling")

	r.Translation = o.boolean("translation", false)
	present = o.has("translation_config")
	r.TranslationConfig = decodeTranslationConfig(o)
	required(r.Translation, present, "translation_config", "translation")

	r.NamedEntityRecognition = o.boolean("named_entity_recognition", false)
	r.SentimentAnalysis = o.boolean("sentiment_analysis", false)
	return r
}

// oneOfInt reports whether f is one of set, reporting a problem listing the
// set if not.
func oneOfInt(p *problems, path string, f float64, set []int) bool {
	if f == float64(int(f)) && slices.Contains(set, int(f)) {
		return true
	}
	list := ""
	for i, v := range set {
		if i > 0 {
			list += ", "
		}
		list += fmt.Sprint(v)
	}
	p.addf(path, "must be one of %s", list)
	return false
}

// dtmfSequence reads a pci sequence field: 1 to MaxDTMFSequence DTMF
// digits (0-9, *, #, A-D); "" when absent or malformed.
func dtmfSequence(p *problems, o *object, name string) string {
	s, path, ok := o.str(name)
	if !ok {
		return ""
	}
	if len(s) == 0 || len(s) > MaxDTMFSequence {
		p.addf(path, "must be 1 to %d DTMF digits", MaxDTMFSequence)
		return ""
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c == '*' || c == '#' || c >= 'A' && c <= 'D') {
			p.addf(path, "must be DTMF digits only (0-9, *, #, A-D)")
			return ""
		}
	}
	return s
}
