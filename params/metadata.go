package params

import (
	"bytes"
	"encoding/json"

	"github.com/earshot-dev/earshot/internal/jsonobject"
)

// decodeMetadata reads custom_metadata: a free-form object of at most
// MaxMetadataKeys keys and MaxMetadataBytes bytes re-encoded. Numbers are kept as
// json.Number, so they marshal back exactly as sent. An empty object is the
// same as none (nil).
func decodeMetadata(parent *object) jsonobject.Object {
	raw, path, ok := parent.take("custom_metadata")
	if !ok {
		return nil
	}
	if kindOf(raw) != kindObject {
		parent.p.addf(path, "must be an object")
		return nil
	}
	tooBig := func() jsonobject.Object {
		parent.p.addf(path, "must be at most %d bytes", MaxMetadataBytes)
		return nil
	}
	if len(raw) > 4*MaxMetadataBytes {
		return tooBig() // not worth decoding
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		parent.p.addf(path, "must be an object")
		return nil
	}
	if len(m) > MaxMetadataKeys {
		parent.p.addf(path, "must have at most %d keys", MaxMetadataKeys)
		return nil
	}
	// Measured as it will be stored (compact, escaped), so what is accepted
	// once is accepted again from request_params.
	if b, err := json.Marshal(m); err != nil || len(b) > MaxMetadataBytes {
		return tooBig()
	}
	if len(m) == 0 {
		return nil
	}
	return m
}
