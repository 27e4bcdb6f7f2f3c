// Package rtp receives the media of one call: RTP over UDP (RFC 3550) with
// pion/rtp, a jitter buffer that reorders and conceals loss with silence
// (never more silence in a channel than the call's wall-clock time and a
// second: a faster timestamp jump is a new timeline, mixer.go), SSRC
// changes, RFC 4733 telephone events skipped, RTCP receiver reports and
// an inactivity timeout. It owns the UDP port pairs of a configured range.
//
// G.711 is carried as raw bytes: a Receiver writes PCMU or PCMA frames, one
// byte per sample per channel, interleaved frame by frame when a call has
// several streams (SIPREC); decoding to PCM happens behind the live session.
// G.722 (one byte per 8000 Hz clock tick too) goes through the same jitter
// buffer and mixer as bytes and is decoded at the end, one decoder per
// channel, to 16 kHz 16-bit PCM. It does no VAD, resampling or recognition,
// and does not import a door.
package rtp
