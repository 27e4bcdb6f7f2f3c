package rtp

import "github.com/zaf/g711"

// Codec is a G.711 law; a stream's payload types map to one.
type Codec int

// Codecs this package carries (RFC 3551 static payload types 0 and 8).
const (
	// PCMU is G.711 mu-law, payload type 0, silence 0xFF.
	PCMU Codec = iota
	// PCMA is G.711 A-law, payload type 8, silence 0xD5.
	PCMA
)

// String returns the SDP encoding name.
func (c Codec) String() string {
	switch c {
	case PCMU:
		return "PCMU"
	case PCMA:
		return "PCMA"
	}
	return "unknown"
}

// Silence is the byte that encodes a zero sample.
func (c Codec) Silence() byte {
	if c == PCMA {
		return 0xD5
	}
	return 0xFF
}

// transcode rewrites b in place from one law to the other (a codec change
// by re-INVITE mid-call); same laws are left alone.
func transcode(b []byte, from, to Codec) {
	switch {
	case from == to:
	case from == PCMA:
		for i, v := range b {
			b[i] = g711.Alaw2UlawFrame(v)
		}
	default:
		for i, v := range b {
			b[i] = g711.Ulaw2AlawFrame(v)
		}
	}
}
