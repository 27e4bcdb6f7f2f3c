// Package pipelinetest holds the test helpers of the recognition pipeline
// and of its callers: a stand-in for an OpenAI-compatible chat-completions
// server (the add-ons' language-model backend, which cannot run here) and
// a goroutine leak check.
package pipelinetest
