package sentences

// Languages returns the language codes whose transcripts Split reads: only
// English. On another language its word cues (words.go) do not fire and
// pauses alone decide, which the pipeline does not report as sentences.
func Languages() []string { return []string{"en"} }
