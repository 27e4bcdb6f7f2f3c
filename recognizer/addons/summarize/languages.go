package summarize

// Languages returns the language codes whose transcripts Summarize and
// Chapters read: only English. Their stop words and suffix stripping are
// English; on another language every word counts as content and the
// sentences they rest on come from English rules (package sentences), so
// the pipeline does not run them there. The language-model summaries of
// package llm are not bound by this.
func Languages() []string { return []string{"en"} }
