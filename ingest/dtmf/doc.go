// Package dtmf detects and removes in-band DTMF tones (ITU-T Q.23 keys sent
// as audio) in a stream of 16-bit linear PCM at 8 kHz or 16 kHz: a call's
// G.711 audio once decoded, or G.722's. It is pure Go.
//
// Detection is Goertzel-style: every hop (6.375 ms) a block of 12.75 ms
// (102 samples at 8 kHz, 204 at 16 kHz; blocks overlap by half) is
// correlated with the eight DTMF frequencies and their second harmonics,
// and holds a key when it passes every ITU-T Q.24 check (analysis.go):
// one tone per group at least relativePeak above the others of its group,
// each at least minLevel, twist within normalTwist (low group louder) and
// reverseTwist, the two tones carrying most of the block's energy
// (toneFraction: the main defence against speech), second harmonics weak
// (a voice has harmonics, a DTMF generator has none). A key is accepted
// (key.go) after confirmHops blocks in a row hold it (38 ms: Q.24's 40 ms
// operate time) and its two tones' measured frequencies, from the phase
// advance between overlapping blocks, lie within freqTolerance of the
// nominal ones (Q.24: accept ±1.5 %, reject ±3.5 %); it ends after
// gapHops blocks without it (25 ms: a 10 ms interruption does not split a
// key, a 40 ms pause does).
//
// Filter delays the audio by a fixed lookahead (51 ms) so that it can
// replace an accepted key's samples with silence from the tone's onset,
// not only from the moment it was confirmed, before passing them on.
//
// It owns no I/O, knows nothing of sessions or codecs, starts no goroutine
// and keeps no global state.
//
// Invariants: a Filter's memory is fixed at New whatever it is written
// (the output buffer grows to the largest Write); after any sequence of
// Writes the samples returned so far are max(0, written-Lookahead), and
// Flush returns the rest, so output and input have the same length; no
// input panics.
package dtmf
