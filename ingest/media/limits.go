package media

import (
	"fmt"
	"math"
	"time"
)

// DecodedBytesPerSecond is what one second of one channel takes once
// decoded: 16 kHz 16-bit samples (115.2 MB per channel-hour). Decode holds
// the whole file so, every channel apart, until the caller drops it.
const DecodedBytesPerSecond = OutputRate * 2

// CheckLimits reports whether audio that Probe described as info is within
// o's bounds, so that a caller can refuse a file before keeping or decoding
// it: at most MaxChannels channels (else ErrTooManyChannels, beside
// ErrUnsupported), at most Options.MaxDuration long (ErrTooLong), and at
// most Options.MaxDecodedBytes once decoded, its channels times its
// duration at DecodedBytesPerSecond (ErrTooMuchAudio). Decode applies the
// same checks before it allocates. A Duration of 0 (a container that does
// not say) passes the duration bounds; Decode then stops its output at
// them. A nil o means defaults.
func CheckLimits(info Info, o *Options) error {
	opts := o.withDefaults()
	return opts.check(info)
}

// check is CheckLimits on defaulted options.
func (o *Options) check(info Info) error {
	if info.Channels > MaxChannels {
		return fmt.Errorf("%w: %w: %d channels (max %d)", ErrUnsupported, ErrTooManyChannels, info.Channels, MaxChannels)
	}
	if d := secondsDuration(info.Duration); d > o.MaxDuration {
		return fmt.Errorf("%w: %s > limit %s", ErrTooLong, d.Round(time.Millisecond), o.MaxDuration)
	}
	// In floating point: a header's duration may be far beyond int64 bytes.
	if need := info.Duration * DecodedBytesPerSecond * float64(info.Channels); need > float64(o.MaxDecodedBytes) {
		return fmt.Errorf("%w: %d channels of %s decode to %.0f bytes > limit %d", ErrTooMuchAudio,
			info.Channels, secondsDuration(info.Duration).Round(time.Millisecond), need, o.MaxDecodedBytes)
	}
	return nil
}

// frameBound is the most 16 kHz frames of nch channels Decode may return
// under o, and the error it returns once its output passes them: the
// duration bound or the decoded-bytes bound, whichever is reached first.
func (o *Options) frameBound(nch int) (int64, error) {
	byDuration := int64(o.MaxDuration.Seconds() * OutputRate)
	if byBytes := o.MaxDecodedBytes / int64(2*nch); byBytes < byDuration {
		return byBytes, fmt.Errorf("%w: decoded output of %d channels passed limit %d bytes", ErrTooMuchAudio, nch, o.MaxDecodedBytes)
	}
	return byDuration, fmt.Errorf("%w: decoded output passed limit %s", ErrTooLong, o.MaxDuration)
}

// secondsDuration converts s seconds to a Duration, saturating instead of
// overflowing.
func secondsDuration(s float64) time.Duration {
	if s >= math.MaxInt64/float64(time.Second) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(s * float64(time.Second))
}
