package dtmf

import "errors"

// ErrRate is returned by New for a sample rate other than 8000 or 16000.
var ErrRate = errors.New("dtmf: sample rate must be 8000 or 16000 Hz")
