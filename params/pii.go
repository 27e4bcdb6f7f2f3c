package params

import "strings"

// PII redaction output forms (PROTOCOL.md).
const (
	RedactMarker = "MARKER"
	RedactMask   = "MASK"
	// PresetGDPR is the entity type used when entity_types is empty.
	PresetGDPR = "GDPR"
)

// What replaces a redacted entity's words in the job's stored audio
// (pii_redaction_config.audio, an earshot extension; PROTOCOL.md).
const (
	AudioSilence = "silence" // digital silence (the default)
	AudioTone    = "tone"    // a 1 kHz tone at -20 dBFS
	AudioOff     = "off"     // the audio is kept as it came
)

// PIIRedactionConfig is pii_redaction_config, defaults filled in.
// EntityTypes are kept as sent (upper-cased, repeats dropped), known or not:
// a type the appliance cannot detect is reported in the add-on's envelope,
// not rejected (PROTOCOL.md). An empty list becomes ["GDPR"].
type PIIRedactionConfig struct {
	EntityTypes []string `json:"entity_types"`
	// ProcessedTextType is MARKER (default) or MASK.
	ProcessedTextType string `json:"processed_text_type"`
	// Audio is what the stored audio holds over each redacted entity's
	// words: AudioSilence (default), AudioTone or AudioOff.
	Audio string `json:"audio"`
}

// AudioMode is c's audio, AudioSilence when c is nil or says nothing (a
// request stored before the field existed).
func (c *PIIRedactionConfig) AudioMode() string {
	if c == nil || c.Audio == "" {
		return AudioSilence
	}
	return c.Audio
}

func defaultPIIRedactionConfig() *PIIRedactionConfig {
	return &PIIRedactionConfig{EntityTypes: []string{PresetGDPR}, ProcessedTextType: RedactMarker, Audio: AudioSilence}
}

func decodePIIRedactionConfig(parent *object) *PIIRedactionConfig {
	o, ok := parent.object("pii_redaction_config")
	if !ok {
		return nil
	}
	defer o.done()
	c := defaultPIIRedactionConfig()
	if ts, _, ok := o.strings("entity_types", MaxEntityTypes, func(path, s string) (string, bool) {
		t := strings.ToUpper(strings.TrimSpace(s))
		return t, word(o.p, path, t, MaxWordLength)
	}); ok && len(ts) > 0 {
		c.EntityTypes = dedupe(ts)
	}
	if s, path, ok := o.str("processed_text_type"); ok && oneOf(o.p, path, s, RedactMarker, RedactMask) {
		c.ProcessedTextType = s
	}
	if s, path, ok := o.str("audio"); ok && oneOf(o.p, path, s, AudioSilence, AudioTone, AudioOff) {
		c.Audio = s
	}
	return c
}
