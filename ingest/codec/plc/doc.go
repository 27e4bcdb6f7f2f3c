// Package plc is a cgo binding of the packet loss concealer of Debian's
// spandsp (libspandsp-dev, spandsp/plc.h): G.711 Appendix I style
// waveform substitution. While audio is received it keeps the last 35 ms
// of history; over a loss it repeats the last pitch period (found by AMDF,
// 40-120 samples), joined by overlap-add and faded linearly to silence
// over 400 samples (50 ms at 8 kHz, 25 ms at 16 kHz), and it blends the
// first quarter period of the audio after the loss into the fill. A
// NewNoiseFloor concealer writes, where the fill has faded, a noise floor
// (about -72 dBFS) instead of digital silence, once audio was received:
// frames of zeros inside speech cost the recogniser words.
//
// It owns one C state per Concealer and nothing else. Invariants: no C
// type crosses its boundary; C memory is freed in Close, never by a
// finalizer; a Concealer is used by one goroutine at a time; the C code
// writes only into buffers at least as long as it may write (plc_fillin
// writes a quarter pitch period, up to 30 samples, even when asked for
// fewer: short fills go through a scratch buffer), and a loss longer than
// MaxFill is zeros written here without calling C, so the C counter of
// missing samples stays bounded whatever the gaps.
package plc
