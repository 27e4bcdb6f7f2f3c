package params

import "strings"

// PII redaction output forms (PROTOCOL.md).
const (
	RedactMarker = "MARKER"
	RedactMask   = "MASK"
	// PresetGDPR is the entity type used when entity_types is empty.
	PresetGDPR = "GDPR"
)

// PIIRedactionConfig is pii_redaction_config, defaults filled in.
// EntityTypes are kept as sent (upper-cased, repeats dropped), known or not:
// a type the appliance cannot detect is reported in the add-on's envelope,
// not rejected (PROTOCOL.md). An empty list becomes ["GDPR"].
type PIIRedactionConfig struct {
	EntityTypes []string `json:"entity_types"`
	// ProcessedTextType is MARKER (default) or MASK.
	ProcessedTextType string `json:"processed_text_type"`
}

func defaultPIIRedactionConfig() *PIIRedactionConfig {
	return &PIIRedactionConfig{EntityTypes: []string{PresetGDPR}, ProcessedTextType: RedactMarker}
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
	return c
}
