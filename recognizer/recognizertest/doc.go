// Package recognizertest holds test helpers for speech recognition: word
// error rate, the shared speech test set (shared/testdata/speech, found by
// walking up from the working directory) and a small 16-bit PCM WAV reader.
//
// It is for tests and benchmarks only; production code decodes audio with
// ingest/media. Helpers taking a testing.TB fail the test on error.
package recognizertest
