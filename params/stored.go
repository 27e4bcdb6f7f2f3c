package params

import (
	"errors"
	"fmt"
)

// ErrStoredParams is returned when a job's stored request_params do not
// decode: written by another version, or damaged.
var ErrStoredParams = errors.New("params: stored request params are unusable")

// A job's request_params are the decoded request marshalled back (the
// contract's field names, every default filled in) when the job was
// created. Every reader of them decodes them here, with the request's own
// decoder and checks (the fuzz targets hold that the decoder takes back
// what it marshals), so a stored job is never acted on with values a
// request could not carry; what the appliance serves (engines, languages,
// uploaded files) is not checked again: it was when the job was accepted.
// internal/archtest checks that no other package unmarshals them.

// StoredPreRecorded decodes a pre-recorded job's stored request_params.
func StoredPreRecorded(raw []byte) (*PreRecorded, error) {
	r, err := decodePreRecorded(raw, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrStoredParams, err)
	}
	return r, nil
}

// StoredLive decodes a live job's stored request_params.
func StoredLive(raw []byte) (*Live, error) {
	l, err := decodeLive(raw, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrStoredParams, err)
	}
	return l, nil
}
