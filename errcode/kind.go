package errcode

// Kind is one class of the contract's errors: the HTTP status a door
// answers for it and what a client is told. A Kind is itself an error, so
// it serves as a sentinel (errors.Is) and as the Kind of an *Error.
type Kind struct {
	text    string // Error(): for logs
	status  int    // 0: the parent's
	message string // the client message of a bare error of this kind; "": the parent's
	shown   bool   // an *Error of this kind shows its Msg to the client
	parent  *Kind  // nil for the kinds declared in this package
}

func (k *Kind) Error() string { return k.text }

// Is lets errors.Is find the kind a lower package's sentinel was derived
// from (Sub): errors.Is(store.ErrNotFound, errcode.ErrNotFound) is true.
func (k *Kind) Is(target error) bool {
	for p := k.parent; p != nil; p = p.parent {
		if p == target {
			return true
		}
	}
	return false
}

// Status is the HTTP status of errors of this kind.
func (k *Kind) Status() int {
	for ; k != nil; k = k.parent {
		if k.status != 0 {
			return k.status
		}
	}
	return 500
}

// Shown reports whether the Msg of an *Error of this kind is written for
// the client and shown (4xx kinds, and 5xx kinds whose cause the client
// can act on: a storage quota, a named remote engine). Otherwise the
// client sees the kind's message and the error goes to the log.
func (k *Kind) Shown() bool { return k.shown }

// message is the client message of a bare error of kind k.
func (k *Kind) clientMessage() string {
	for ; k != nil; k = k.parent {
		if k.message != "" {
			return k.message
		}
	}
	return "internal error"
}

// Sub derives a sentinel of kind k for a lower package, with its own log
// text and, when message is not "", its own client message. It has k's
// status and Shown, and errors.Is finds k through it: the status stays
// declared once, here.
func (k *Kind) Sub(text, message string) *Kind {
	return &Kind{text: text, message: message, shown: k.shown, parent: k}
}
