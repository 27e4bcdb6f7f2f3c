package pipeline

import (
	"fmt"
	"strings"

	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer/addons/ner"
	"github.com/earshot-dev/earshot/recognizer/addons/pii"
	"github.com/earshot-dev/earshot/transcript"
)

// RedactedAudio is what a pii_redaction job's stored audio is to become
// (pii_redaction_config.audio silence or tone): the caller (the daemon's
// worker, a live session's batch pass) writes it and replaces the stored
// audio before it stores the job done, so the original audio is not kept.
type RedactedAudio struct {
	// Channels is the job's audio as decoded (OutputRate, one slice per
	// channel), for a pre-recorded job's new file (media.WriteWAV); nil
	// for a batch pass, which blanks the recording in its own encoding.
	Channels [][]int16
	// Spans are the redacted entities' words, from the first word's start
	// to the last word's end, widened by pii.AudioGuard and joined
	// (every channel is blanked over them).
	Spans []media.Span
	// Fill is media.FillSilence or media.FillTone.
	Fill media.Fill
}

// redactedAudio returns the RedactedAudio of a job asking p over the
// entities found (nil when p does not ask for the audio to be redacted).
// An empty found still gives one: the stored file is replaced all the
// same, so its format does not depend on what was found.
func redactedAudio(p *params.PreRecorded, channels [][]int16, found []ner.Entity) *RedactedAudio {
	if !p.PIIRedaction {
		return nil
	}
	fill := media.FillSilence
	switch p.PIIRedactionConfig.AudioMode() {
	case params.AudioOff:
		return nil
	case params.AudioTone:
		fill = media.FillTone
	}
	return &RedactedAudio{Channels: channels, Spans: pii.AudioSpans(found), Fill: fill}
}

// piiResults are the pii_redaction envelope's results: what was redacted,
// {entity_type, start, end, channel}, without the text.
func piiResults(found []ner.Entity) []map[string]any {
	res := make([]map[string]any, 0, len(found))
	for _, e := range found {
		res = append(res, map[string]any{"entity_type": e.Type, "start": transcript.Round3(e.Start), "end": transcript.Round3(e.End), "channel": e.Channel})
	}
	return res
}

// unsupportedTypes is the envelope's error for the entity types asked for
// that the appliance cannot detect (nil when there are none).
func unsupportedTypes(unsupported []string) error {
	if len(unsupported) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s (the supported types found were redacted)", errUnsupportedTypes, strings.Join(unsupported, ", "))
}

// LivePIIEnvelope is the pii_redaction envelope of a live session's
// result: the entities its stream redacted (found), and an error naming
// the types asked for (types, as pii_redaction_config.entity_types) that
// the appliance cannot detect, as a pre-recorded job's envelope.
func LivePIIEnvelope(found []ner.Entity, types []string) *transcript.Envelope {
	res := piiResults(found)
	env := &transcript.Envelope{Success: true, IsEmpty: len(res) == 0, Results: res}
	if _, unknown := ner.Expand(types); unknown != nil {
		env.Success, env.Error = false, addonError(unsupportedTypes(unknown))
	}
	return env
}
