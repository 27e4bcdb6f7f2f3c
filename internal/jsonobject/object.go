// Package jsonobject holds Object, the free-form JSON object earshot takes
// from requests (custom_metadata) and keeps on jobs. It is its own package
// so that the request decoder (params) and the store decode it the one same
// way: what the API accepts, the store reads back.
package jsonobject

import (
	"bytes"
	"encoding/json"
)

// Object is a free-form JSON object whose numbers decode as json.Number, so
// every number JSON allows reads back exactly as it was written, whatever
// float64 can hold: 1e309 is valid JSON that float64 cannot represent, and
// a reader that decoded it into float64 could not read its own record.
type Object map[string]any

// UnmarshalJSON decodes an object (or null) keeping numbers as json.Number.
func (o *Object) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		return err
	}
	*o = v
	return nil
}
