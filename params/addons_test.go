package params

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestAddonLanguages checks the 422 for an add-on that reads none of the
// listed languages, on pre-recorded bodies, live bodies and a door's live
// options (CheckLanguages), and that it does not fire when one listed
// language is read, when none is listed (detection), when the add-on is
// off or when it reads any language.
func TestAddonLanguages(t *testing.T) {
	caps := Capabilities{
		Languages:      []string{"en", "fr", "de"},
		AddonLanguages: map[string][]string{"named_entity_recognition": {"en"}, "pii_redaction": {"en"}, "chapterization": {"en"}},
	}
	refused := func(t *testing.T, err error, field string) {
		t.Helper()
		if !errors.Is(err, ErrCannotServe) || !strings.Contains(err.Error(), field+" true: this add-on reads only en") ||
			!strings.Contains(err.Error(), "language_config.languages names fr") {
			t.Fatalf("got %v, want the 422 naming %s and fr", err, field)
		}
	}
	for _, tc := range []struct {
		name, body, field string // field "" means accepted
	}{
		{"ner on fr", `"named_entity_recognition":true,"language_config":{"languages":["fr"]}`, "named_entity_recognition"},
		{"pii on fr and de", `"pii_redaction":true,"language_config":{"languages":["fr","de"]}`, "pii_redaction"},
		{"ner on fr or en", `"named_entity_recognition":true,"language_config":{"languages":["fr","en"]}`, ""},
		{"ner detecting", `"named_entity_recognition":true`, ""},
		{"ner off", `"named_entity_recognition":false,"language_config":{"languages":["fr"]}`, ""},
		{"an add-on reading any language", `"diarization":true,"language_config":{"languages":["fr"]}`, ""},
	} {
		t.Run("pre-recorded "+tc.name, func(t *testing.T) {
			_, err := DecodePreRecorded([]byte(pr(tc.body)), caps)
			if tc.field != "" {
				refused(t, err, tc.field)
			} else if err != nil {
				t.Fatal(err)
			}
		})
	}
	for _, tc := range []struct{ name, body, field string }{
		{"realtime ner on fr", `{"realtime_processing":{"named_entity_recognition":true},"language_config":{"languages":["fr"]}}`,
			"realtime_processing.named_entity_recognition"},
		{"chapterization on fr", `{"post_processing":{"chapterization":true},"language_config":{"languages":["fr"]}}`,
			"post_processing.chapterization"},
		{"pii on fr", `{"pii_redaction":true,"language_config":{"languages":["fr"]}}`, "pii_redaction"},
		{"realtime ner on en", `{"realtime_processing":{"named_entity_recognition":true},"language_config":{"languages":["en"]}}`, ""},
		{"realtime ner detecting", `{"realtime_processing":{"named_entity_recognition":true}}`, ""},
	} {
		t.Run("live "+tc.name, func(t *testing.T) {
			_, err := DecodeLive([]byte(tc.body), caps)
			if tc.field != "" {
				refused(t, err, tc.field)
			} else if err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("a door's live options", func(t *testing.T) {
		l, err := DecodeLiveOptions(map[string]any{"realtime_processing": map[string]any{"named_entity_recognition": true},
			"language_config": map[string]any{"languages": []string{"fr"}}})
		if err != nil {
			t.Fatal(err)
		}
		refused(t, l.CheckLanguages(caps), "realtime_processing.named_entity_recognition")
	})
}

// TestAnyAddon: every switch of a pre-recorded request is an add-on that
// AnyAddon counts, but for the ones named here that are not add-ons, so a
// new add-on field cannot be left out of addonSwitches unnoticed.
func TestAnyAddon(t *testing.T) {
	notAddons := map[string]bool{"Callback": true}
	if (&PreRecorded{}).AnyAddon() {
		t.Fatal("a request without add-ons has one")
	}
	typ := reflect.TypeFor[PreRecorded]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Type.Kind() != reflect.Bool || notAddons[f.Name] {
			continue
		}
		var p PreRecorded
		reflect.ValueOf(&p).Elem().Field(i).SetBool(true)
		if !p.AnyAddon() {
			t.Errorf("%s true: AnyAddon false (not in addonSwitches?)", f.Name)
		}
	}
}
