package subtitles

import "errors"

// ErrInvalidConfig is returned by Build when its Config fails Validate.
var ErrInvalidConfig = errors.New("subtitles: invalid config")
