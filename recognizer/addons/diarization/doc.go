// Package diarization labels each utterance of a transcript with a speaker
// index. When the recording's channels carry different sources (one
// speaker per channel, as telephony and SIPREC deliver), the speaker is the
// channel. Otherwise it clusters voice characteristics: for each utterance
// it computes mel-frequency cepstral coefficients (mfcc.go: pre-emphasis,
// Hamming window, FFT, mel filterbank, log, DCT), keeps the frames with
// speech energy, summarises them as per-coefficient mean and standard
// deviation, and groups the utterances by average-linkage agglomerative
// clustering on cosine distance (cluster.go). Clustering stops at exactly
// Config.NumberOfSpeakers when given, otherwise when the closest clusters
// are farther apart than Config.Threshold, and the count is then bounded
// by MinSpeakers and MaxSpeakers.
//
// It is a statistical heuristic without a trained speaker model: it
// separates voices that differ clearly (a man and a woman, different
// microphones) and confuses similar ones. Utterances under half a second
// of speech are too short to characterise and take the nearest cluster.
// The package is pure Go and keeps no state.
package diarization
