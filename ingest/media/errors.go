package media

import "errors"

// Errors returned by this package, always wrapped with the action and the
// measured values; callers branch with errors.Is.
var (
	// ErrUnsupported is returned when input is not audio we can read: an
	// unknown container or codec, a WAV encoding or bit depth we do not
	// decode, more than 8 channels (beside ErrTooManyChannels), a sample
	// rate outside 1000..192000 Hz, or a URL scheme other than http and
	// https.
	ErrUnsupported = errors.New("media: unsupported audio")
	// ErrTooManyChannels is returned, beside ErrUnsupported, when audio has
	// more than MaxChannels channels.
	ErrTooManyChannels = errors.New("media: too many channels")
	// ErrCorrupt is returned when input claims to be a known format but is
	// truncated, garbled, internally inconsistent or holds no samples.
	ErrCorrupt = errors.New("media: corrupt audio")
	// ErrTooLong is returned when audio is longer than Options.MaxDuration.
	ErrTooLong = errors.New("media: audio too long")
	// ErrTooMuchAudio is returned when audio's channels times its duration
	// would decode to more than Options.MaxDecodedBytes.
	ErrTooMuchAudio = errors.New("media: too much audio")
	// ErrTooLarge is returned when a fetched body declares or delivers more
	// than FetchOptions.MaxBytes.
	ErrTooLarge = errors.New("media: too large")
	// ErrFetch is returned when a URL cannot be fetched: network or DNS
	// failure, a denied destination address, a non-2xx status, a timeout, or
	// a body read that failed part way.
	ErrFetch = errors.New("media: fetch")
	// ErrStatus is returned, beside ErrFetch, when the remote server
	// answers a non-2xx status.
	ErrStatus = errors.New("media: remote answered an error status")
	// ErrDenied is returned (wrapped, beside ErrFetch for Fetch) when a
	// destination address is refused by a Guard.
	ErrDenied = errors.New("media: destination denied")
)
