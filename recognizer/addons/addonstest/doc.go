// Package addonstest gives the add-on packages' tests real transcripts: it
// decodes clips of shared/testdata/speech with the embedded PocketSphinx
// engine through the batch pipeline, exactly as the daemon would, and
// offers small checks shared by those tests. It is imported by tests only.
package addonstest
