package store

// RecoverOptions says how Recover treats the work the last run left
// unfinished.
type RecoverOptions struct {
	// Crashed says the last run died of a fatal error of its own (a
	// crash in C code, an unrecovered panic), not of a kill or a power
	// loss. The pre-recorded jobs it left processing may have caused it,
	// so they are not requeued (a poison job would crash every run that
	// picks it up) but reported in RecoverReport.Suspects, still
	// processing, for the caller to end.
	Crashed bool
}

// RecoverReport says what Recover found.
type RecoverReport struct {
	Requeued []string // pre-recorded jobs put back in the queue, oldest first
	Suspects []string // pre-recorded jobs left processing by a crash (RecoverOptions.Crashed), oldest first
	Live     []string // live jobs left queued or processing, oldest first, for the daemon to finalise
	// BatchPasses are the live jobs whose batch pass was running, put
	// back to queued (also after a crash: Attempts bounds a pass that
	// crashes every run).
	BatchPasses []string
	// Quarantined are the unfinished jobs whose records had unreadable
	// fields, now ended error (quarantine.go); Corrupt the unfinished jobs
	// whose records cannot be read at all, left as they are (Check reports
	// them) and out of the queue.
	Quarantined []string
	Corrupt     []string
}
