// Package recognizer turns 16 kHz mono PCM into words: it declares the
// Engine and Stream interfaces that engines (recognizer/sphinx, remote
// servers) implement, the energy-based voice activity segmentation (Segment)
// and the batch pipeline (Transcribe) that decodes a recording's channels
// segment by segment in parallel.
//
// It does not decode containers or resample (ingest/media does) and keeps
// no state between calls; engines own their decoder pools and bound them,
// so every caller gets back-pressure (ErrAtCapacity), never an unbounded
// queue. Times in results are seconds from the start of the input.
package recognizer
