// Package params decodes and validates the two POST bodies of the /v2
// contract: the pre-recorded initiation body (SPEC 2.4, 2.6, 2.7) and the
// live initiation body (SPEC 2.3, 2.6, 2.7 and the switches of section 6).
//
// It owns the split PROTOCOL.md draws between the contract's 400 and 422:
// DecodePreRecorded and DecodeLive return a *ValidationError listing every
// malformed field (body not JSON, wrong type, value outside its set or range,
// unknown field, over-long array) by its JSON path, and only when there is
// none do they check whether the appliance can serve the request, returning
// an *errcode.Error of kind ErrCannotServe whose Msg names the field and is
// shown to users.
//
// It does not fetch audio, look up keys, or know which engines exist: the
// caller describes what the appliance can serve in Capabilities. Decoded
// values carry every default filled in and marshal back to JSON with the
// contract's field names, as the job's request_params; decoding that JSON
// again gives the same value.
//
// Decoding is a small strict walker over map[string]json.RawMessage per
// object, so each unknown field and each wrong type is reported on its own.
// Every array and map accepted from a client is capped (limits.go); null for
// an optional field means the field is absent.
package params
