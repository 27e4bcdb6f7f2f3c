// Package codec is the one table of the RTP audio encodings earshot's doors
// negotiate (SIP and WebRTC read SDP through it) and the decoders of the
// wideband ones.
//
// G.711 (PCMU, PCMA) is mandatory on both doors and is written to a live
// session as is: 8 kHz bytes of the session's law, decoded behind the
// session (the telephone-band path). G.722 (SIP) and Opus (WebRTC) are
// decoded here, by the cgo bindings g722 (spandsp) and opus (libopus), to
// 16 kHz 16-bit PCM, and the session is opened for that (the wideband
// path). The packet loss concealer of the byte-stream codecs (G.711,
// G.722) is the cgo binding plc (spandsp). It owns no sockets, SDP parsing
// or sessions.
//
// Invariants: a Codec's decoded Format is fixed (a call cannot change from
// narrowband to wideband mid-session); a Decoder holds C memory until
// Close; no payload, however malformed, makes a Decoder panic or write
// past its output.
package codec
