package quota

import "github.com/earshot-dev/earshot/errcode"

// ErrExceeded is returned when a write would take an account past its
// limit (Reader, Admit); it is errcode.ErrQuota, the contract's 507.
var ErrExceeded = errcode.ErrQuota
