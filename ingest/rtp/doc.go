// Package rtp receives the media of one call: RTP over UDP (RFC 3550) with
// pion/rtp, a jitter buffer that reorders and fills timestamp gaps with
// silence (never more silence in a channel than the call's wall-clock
// time and a second: a faster timestamp jump is a new timeline, mixer.go),
// packet loss concealed with spandsp's PLC (conceal.go: the fill of lost
// packets is marked in the mixer, and each channel's concealer, fed with
// what the channel received, replaces it with waveform substitution
// faded out over 50 ms at 8 kHz; silence suppression, events and pads stay
// silence), SSRC changes, RFC 4733 telephone events skipped, RTCP
// receiver reports and an inactivity timeout. It owns the UDP port pairs
// of a configured range.
//
// G.711 is carried as raw bytes: a Receiver writes PCMU or PCMA frames, one
// byte per sample per channel, interleaved frame by frame when a call has
// several streams (SIPREC); decoding to PCM happens behind the live session.
// G.722 (one byte per 8000 Hz clock tick too) goes through the same jitter
// buffer and mixer as bytes and is decoded at the end, one decoder per
// channel, to 16 kHz 16-bit PCM; a lost span's output is the concealer's
// fill. It does no VAD, resampling or recognition,
// and does not import a door.
package rtp
