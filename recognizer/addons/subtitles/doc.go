// Package subtitles builds SRT and WebVTT subtitle files from word-timed
// transcripts (SPEC 2.4 subtitles_config; PROTOCOL "Values SPEC leaves
// open" for style).
//
// Captions are cut from each channel's words in time order: a caption
// takes words while its rows still fit (rows are broken on word
// boundaries, at most MaximumRowsPerCaption rows of at most
// MaximumCharactersPerRow characters; a single word longer than a row gets
// a row of its own), its span stays within MaximumDuration, and the pause
// before the next word is at most 1.5 s. Once a caption is half full it
// also ends at a sentence end (sentences package); a full caption ends at
// the longest pause (150 ms or more) among its last three words if there
// is one, and never after "the", "of" and the like. Rows are balanced: the
// fewest rows that fit, with the longest row as short as possible.
//
// A caption shown for less than MinimumDuration is held longer, up to the
// next caption of its channel and the end of the audio, and if still short
// starts earlier, down to the previous caption's end. Captions of one
// channel never overlap; channels are interleaved by start time.
//
// Style "compliance" applies broadcast limits on top of the configured
// ones: at most 2 rows of 42 characters, captions held 1 to 7 s.
//
// The package is pure; the caller writes the files.
package subtitles
