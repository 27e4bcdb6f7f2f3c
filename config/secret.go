package config

import "log/slog"

// Secret is a configured credential (an API key of a backend). It prints,
// logs and marshals as REDACTED (empty when unset); only the code that uses
// it reads string(s).
type Secret string

const redacted = "REDACTED"

func (s Secret) show() string {
	if s == "" {
		return ""
	}
	return redacted
}

// LogValue implements slog.LogValuer: REDACTED.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.show()) }

// String returns REDACTED, so %v and %s never print the secret.
func (s Secret) String() string { return s.show() }

// GoString returns REDACTED, so %#v never prints the secret.
func (s Secret) GoString() string { return s.show() }

// MarshalText returns REDACTED, so a config written as JSON or YAML
// carries no secret.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.show()), nil }
