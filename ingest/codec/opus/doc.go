// Package opus is a cgo binding of the Opus decoder (Debian's libopus-dev):
// RTP payloads of a WebRTC audio track (RFC 7587) to 16-bit PCM.
//
// It owns one C decoder state per Decoder and nothing else: no encoder, no
// resampling beyond what libopus does when asked for a rate below 48 kHz.
// Invariants: this is the only package that includes Opus headers; no C
// type crosses its boundary; C memory is freed in Close, never by a
// finalizer; a Decoder is used by one goroutine at a time; no input makes
// it write past the slice it is given.
package opus
