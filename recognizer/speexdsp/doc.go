// Package speexdsp is a cgo binding of the SpeexDSP preprocessor (Debian's
// libspeexdsp-dev): noise suppression and automatic gain control on 16-bit
// PCM frames, the audio_enhancer of live sessions.
//
// It owns one C preprocessor state per Preprocessor (a few tens of KB) and
// nothing else: no resampling, no echo cancelling, and the library's own VAD
// stays off (earshot's VAD lives in package recognizer). Invariants: this is
// the only package that includes SpeexDSP headers; no C type crosses its
// boundary; C memory is freed in Close, never by a finalizer; a Preprocessor
// is used by one goroutine at a time.
package speexdsp
