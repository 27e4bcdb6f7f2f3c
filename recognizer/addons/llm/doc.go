// Package llm is the client for an OpenAI-compatible chat-completions
// server (llama.cpp server, vLLM, Ollama, a hosted API) and the add-ons
// that need a language model: Translate, AnswerPrompts (audio_to_llm) and
// AbstractiveSummary.
//
// Complete posts {model, messages, temperature: 0} to {URL}/chat/completions
// with the key as a bearer token through an openai.Client, so it retries by
// the one rule every OpenAI-compatible backend shares (package openai:
// connection failures, 408, 429 and 5xx retried Config.Retries times with
// doubling backoff or Retry-After up to 10 s; a timed-out attempt is not
// retried); responses are read up to MaxResponseBytes.
// Errors wrap ErrBackend (as *BackendError with the status), ErrTimeout,
// ErrUnavailable or ErrMalformed, so the daemon can fill an add-on
// envelope's error. The add-on functions bound all their requests
// together by Config.Budget (one job's worth).
//
// The client holds an HTTP connection pool: Close releases it. It starts
// no goroutine of its own and keeps no other state between calls; it is
// safe for concurrent use. It never logs; the API key never appears in
// errors and is redacted by Config.LogValue.
package llm
