// Package dtmftest makes DTMF test signals and measures them: tones of any
// key, level, twist and frequency error (Tone), mixed into speech (Add),
// sequences of keys at known times (Sequence), a tone's level over a span
// of audio (Level), real speech from shared/testdata and shared/corpus at
// 8 or 16 kHz, through G.711 or not (Speech). Test and benchmark code only.
package dtmftest
