package params

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestStoredParams: what the decoders accepted and marshalled decodes back
// to the same value, without the appliance's capabilities (an upload
// since deleted, a language no longer served); stored bytes a request
// could not carry (damaged, or over a bound) are ErrStoredParams.
func TestStoredParams(t *testing.T) {
	pr, err := DecodePreRecorded([]byte(`{"audio_url":"https://h/v2/files/f1","custom_vocabulary":["a"],"pii_redaction":true}`), fuzzCaps)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(pr)
	got, err := StoredPreRecorded(raw)
	if err != nil || !reflect.DeepEqual(got, pr) {
		t.Fatalf("stored pre-recorded: %v\n%#v\n%#v", err, got, pr)
	}
	lv, err := DecodeLive([]byte(`{"encoding":"wav/ulaw","sample_rate":8000,"language_config":{"languages":["en"]},"pci":{"start_paused":true}}`), fuzzCaps)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ = json.Marshal(lv)
	gotLive, err := StoredLive(raw)
	if err != nil || !reflect.DeepEqual(gotLive, lv) {
		t.Fatalf("stored live: %v\n%#v\n%#v", err, gotLive, lv)
	}
	// A language this appliance no longer serves: still readable.
	if _, err := StoredLive([]byte(`{"language_config":{"languages":["fr"]}}`)); err != nil {
		t.Errorf("a stored session in a language no longer served: %v", err)
	}
	tooMany := `{"audio_url":"https://h/a.wav","custom_vocabulary":["` + strings.Repeat(`w","`, MaxVocabularyItems) + `w"]}`
	for _, bad := range []string{``, `{`, `{"audio_url":5}`, tooMany, `{"audio_url":"https://h/a.wav","x":1}`} {
		if _, err := StoredPreRecorded([]byte(bad)); !errors.Is(err, ErrStoredParams) {
			t.Errorf("%.60q: %v, want ErrStoredParams", bad, err)
		}
	}
	if _, err := StoredLive([]byte(`{"sample_rate":22050}`)); !errors.Is(err, ErrStoredParams) {
		t.Errorf("a sample rate no request may carry: %v, want ErrStoredParams", err)
	}
}
