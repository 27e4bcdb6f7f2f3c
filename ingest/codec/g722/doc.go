// Package g722 is a cgo binding of the ITU-T G.722 decoder of Debian's
// spandsp (libspandsp-dev): 64 kbit/s sub-band ADPCM, as SIP phones send it
// (RFC 3551 payload type 9), to 16 kHz 16-bit PCM.
//
// It owns one C decoder state per Decoder and nothing else (no encoder
// outside tests). Invariants: this and ingest/codec/plc (spandsp's loss
// concealer) are the only packages that include spandsp headers; no C
// type crosses its boundary; C memory is freed in
// Close, never by a finalizer; a Decoder is used by one goroutine at a
// time; every byte is a valid code word, so no input fails or makes it
// write past the slice it is given.
package g722
