package recognizer_test

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer"
)

func TestLiveConfig(t *testing.T) {
	var def recognizer.LiveConfig
	def.SetDefaults()
	if def.SpeechThreshold == nil || *def.SpeechThreshold != recognizer.DefaultSpeechThreshold {
		t.Errorf("default speech threshold %v, want %v", def.SpeechThreshold, recognizer.DefaultSpeechThreshold)
	}
	// No endpointing default here: params owns it (params.Endpointing).
	want := recognizer.LiveConfig{Channels: 1,
		SpeechThreshold: def.SpeechThreshold, PartialInterval: 250 * time.Millisecond, DecoderWait: 3 * time.Second}
	if !reflect.DeepEqual(def, want) {
		t.Errorf("defaults %+v, want %+v", def, want)
	}
	def.Endpointing = params.DefaultEndpointing()
	// An asked 0 (the most sensitive setting) is kept, not taken for unset:
	// speech_threshold 0 ran as 0.6 before (issue 16).
	zero := 0.0
	asked := recognizer.LiveConfig{SpeechThreshold: &zero}
	asked.SetDefaults()
	if *asked.SpeechThreshold != 0 {
		t.Errorf("speech threshold 0 became %v", *asked.SpeechThreshold)
	}
	tests := []struct {
		name string
		edit func(*recognizer.LiveConfig)
		key  string // "" = valid
	}{
		{"defaults", func(*recognizer.LiveConfig) {}, ""},
		{"contract extremes", func(c *recognizer.LiveConfig) {
			one := 1.0
			c.Channels, c.Endpointing, c.SpeechThreshold = 8, endpointing(10*time.Second, 60*time.Second), &one
		}, ""},
		{"contract minimums", func(c *recognizer.LiveConfig) {
			zero := 0.0
			c.Endpointing, c.SpeechThreshold = endpointing(10*time.Millisecond, 5*time.Second), &zero
		}, ""},
		{"channels 9", func(c *recognizer.LiveConfig) { c.Channels = 9 }, "channels"},
		{"channels -1", func(c *recognizer.LiveConfig) { c.Channels = -1 }, "channels"},
		{"endpointing unset", func(c *recognizer.LiveConfig) { c.Endpointing = params.Endpointing{} }, "endpointing"},
		{"endpointing 5ms", func(c *recognizer.LiveConfig) { c.Endpointing.Silence = params.Seconds(5 * time.Millisecond) }, "endpointing"},
		{"endpointing 11s", func(c *recognizer.LiveConfig) { c.Endpointing.Silence = params.Seconds(11 * time.Second) }, "endpointing"},
		{"max 4s", func(c *recognizer.LiveConfig) { c.Endpointing.MaxUtterance = params.Seconds(4 * time.Second) }, "maximum_duration_without_endpointing"},
		{"max 61s", func(c *recognizer.LiveConfig) { c.Endpointing.MaxUtterance = params.Seconds(61 * time.Second) }, "maximum_duration_without_endpointing"},
		{"threshold 1.5", func(c *recognizer.LiveConfig) { v := 1.5; c.SpeechThreshold = &v }, "speech_threshold"},
		{"threshold NaN", func(c *recognizer.LiveConfig) { v := math.NaN(); c.SpeechThreshold = &v }, "speech_threshold"},
		{"partials every 1s", func(c *recognizer.LiveConfig) { c.PartialInterval = time.Second }, "partial_interval"},
		{"decoder wait -1", func(c *recognizer.LiveConfig) { c.DecoderWait = -1 }, "decoder_wait"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := def
			tt.edit(&c)
			err := c.Validate()
			switch {
			case tt.key == "" && err != nil:
				t.Errorf("valid config rejected: %v", err)
			case tt.key != "" && (err == nil || !strings.Contains(err.Error(), " "+tt.key+":")):
				t.Errorf("error %v, want one naming %s", err, tt.key)
			}
		})
	}
	kinds := map[recognizer.EventKind]string{recognizer.EventSpeechStart: "speech_start", recognizer.EventSpeechEnd: "speech_end",
		recognizer.EventPartial: "partial", recognizer.EventFinal: "final", recognizer.EventError: "error"}
	for k, s := range kinds {
		if k.String() != s {
			t.Errorf("%d.String() = %q, want %q", int(k), k.String(), s)
		}
	}
}
