// Package openai is the one HTTP client earshot has for OpenAI-compatible
// servers: the speech engines of recognizer/remote (/audio/transcriptions,
// /audio/translations) and the chat backend of recognizer/addons/llm
// (/chat/completions) both post through it, so they share one retry rule:
//
//   - each attempt is bounded by Endpoint.Timeout; a timed-out attempt is
//     not retried (a server that is too slow would only get more work);
//   - a connection failure or an answer of 408, 429 or 5xx is retried up to
//     Endpoint.Retries times, waiting Endpoint.Backoff, doubling after
//     each retry, or the server's Retry-After (seconds, RFC 9110 §10.2.3)
//     when longer, at most MaxRetryAfter;
//   - any other answer is final: a 2xx body is the caller's to parse, an
//     error status is a *StatusError.
//
// Endpoint holds the keys the two share (url, model, api_key, timeout,
// retries, backoff); their Configs hold it inline, so the file's keys stay
// where they were. A caller that keeps a circuit breaker watches and gates
// each attempt through Attempts. The client logs nothing and starts no
// goroutine; Close releases its idle connections. Errors never carry the
// API key.
package openai
