package sealed

import (
	"crypto/cipher"
	"encoding/json"
	"fmt"

	"github.com/earshot-dev/earshot/store"
)

// metadataField is the one key of a sealed Metadata object: its value is
// the object's JSON, sealed.
const metadataField = "_earshot_sealed"

// sealJob returns a copy of j with its content fields sealed under k.
func sealJob(k cipher.AEAD, j *store.Job) (*store.Job, error) {
	c := j.Clone()
	aad := "job\x00" + j.ID + "\x00"
	if len(c.Params) > 0 && !json.Valid(c.Params) || len(c.Result) > 0 && !json.Valid(c.Result) {
		return nil, fmt.Errorf("job %s: params or result not JSON: %w", j.ID, store.ErrInvalid)
	}
	if len(c.Params) > 0 {
		c.Params = sealedJSON(k, aad+"params", c.Params)
	}
	if len(c.Result) > 0 {
		c.Result = sealedJSON(k, aad+"result", c.Result)
	}
	var err error
	if c.CustomMetadata, err = sealMetadata(k, aad+"custom_metadata", c.CustomMetadata); err != nil {
		return nil, err
	}
	if c.PostSessionMetadata, err = sealMetadata(k, aad+"post_session_metadata", c.PostSessionMetadata); err != nil {
		return nil, err
	}
	if c.File != nil && c.File.Filename != nil {
		s := sealText(k, aad+"filename", []byte(*c.File.Filename))
		c.File.Filename = &s
	}
	return c, nil
}

// openJob returns j with its sealed fields opened in place (j is the
// backend's copy, the caller's to keep). A field left clear (written before
// sealing was on) is kept as it is; k nil means the job has no data key,
// which is an integrity failure for any sealed field.
func openJob(k cipher.AEAD, j *store.Job) (*store.Job, error) {
	aad := "job\x00" + j.ID + "\x00"
	var err error
	if j.Params, err = openJSON(k, aad+"params", j.Params); err != nil {
		return nil, err
	}
	if j.Result, err = openJSON(k, aad+"result", j.Result); err != nil {
		return nil, err
	}
	if j.CustomMetadata, err = openMetadata(k, aad+"custom_metadata", j.CustomMetadata); err != nil {
		return nil, err
	}
	if j.PostSessionMetadata, err = openMetadata(k, aad+"post_session_metadata", j.PostSessionMetadata); err != nil {
		return nil, err
	}
	if j.File != nil && j.File.Filename != nil && isSealed(*j.File.Filename) {
		clear, err := openField(k, aad+"filename", *j.File.Filename)
		if err != nil {
			return nil, err
		}
		s := string(clear)
		f := *j.File
		f.Filename = &s
		j.File = &f
	}
	return j, nil
}

// sealedJSON is raw JSON as a sealed JSON string.
func sealedJSON(k cipher.AEAD, aad string, raw json.RawMessage) json.RawMessage {
	b, _ := json.Marshal(sealText(k, aad, raw))
	return b
}

func openJSON(k cipher.AEAD, aad string, raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 || raw[0] != '"' {
		return raw, nil
	}
	if s, ok := plainString(raw); ok {
		if !isSealed(s) {
			return raw, nil
		}
		return openField(k, aad, s)
	}
	var s string
	if json.Unmarshal(raw, &s) != nil || !isSealed(s) {
		return raw, nil
	}
	return openField(k, aad, s)
}

// plainString returns the content of a JSON string without escapes, such
// as every sealed value (store.SealedPrefix and base64url), without
// json.Unmarshal's two passes over it: on a done job's result these were
// most of what sealing added to a read (bench_test.go, BenchmarkJob).
// ok is false for a string it does not cover (any escape or control
// character), which the caller decodes in full.
func plainString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	for _, c := range body {
		if c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			return "", false
		}
	}
	return string(body), true
}

func sealMetadata(k cipher.AEAD, aad string, md store.Metadata) (store.Metadata, error) {
	if md == nil {
		return nil, nil
	}
	raw, err := json.Marshal(md)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", aad, err)
	}
	return store.Metadata{metadataField: sealText(k, aad, raw)}, nil
}

func openMetadata(k cipher.AEAD, aad string, md store.Metadata) (store.Metadata, error) {
	s, ok := md[metadataField].(string)
	if len(md) != 1 || !ok || !isSealed(s) {
		return md, nil
	}
	raw, err := openField(k, aad, s)
	if err != nil {
		return nil, err
	}
	var out store.Metadata
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("%s: %w", aad, errIntegrity)
	}
	return out, nil
}

func openField(k cipher.AEAD, aad, text string) ([]byte, error) {
	if k == nil {
		return nil, fmt.Errorf("%s: data key destroyed or missing: %w", aad, errIntegrity)
	}
	return openText(k, aad, text)
}

// deliveryAAD binds a delivery's body to its job (or to the delivery
// itself when it has none).
func deliveryAAD(d *store.Delivery) string {
	if d.JobID != "" {
		return "delivery\x00job\x00" + d.JobID
	}
	return "delivery\x00" + d.ID
}

func openUploadName(k cipher.AEAD, u *store.Upload) error {
	if !isSealed(u.Filename) {
		return nil
	}
	clear, err := openField(k, "upload\x00"+u.ID+"\x00filename", u.Filename)
	if err != nil {
		return err
	}
	u.Filename = string(clear)
	return nil
}
