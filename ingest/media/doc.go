// Package media gets audio files into earshot: it reads WAV (PCM, float,
// A-law, mu-law) and raw interleaved samples in Go, hands every other
// container to an ffmpeg subprocess, fetches http(s) audio_urls with size,
// time and destination bounds, resamples with a band-limited polyphase
// windowed-sinc filter, and splits channels.
//
// It owns decoding only: it does not store audio, run voice activity
// detection or know about jobs. It imports nothing of ours, keeps no global
// state and starts no goroutine that outlives a call.
//
// Invariants:
//   - Decode always returns 16 kHz audio, one slice per source channel, never
//     more than 8 channels, never more than Options.MaxDuration of it, and
//     never more than Options.MaxDecodedBytes in all; CheckLimits applies
//     the same bounds to what Probe (or ProbeWAV, over a stream) found,
//     so a file can be refused before it is kept.
//   - Parsers never allocate by a length field without a cap and never loop
//     without consuming input, so hostile files cost at most their own size.
//   - Every ffmpeg/ffprobe run is bounded by Options.Timeout and killed when
//     the caller's context ends.
//   - A fetched body is never decompressed: MaxBytes bounds the bytes as
//     sent. Every outgoing connection (Fetch's, and any built on Guard)
//     is checked against the deny list after DNS, at dial time.
package media
