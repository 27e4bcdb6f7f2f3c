package app

import (
	"log/slog"
	"syscall"
)

// descriptorReserve is what the daemon keeps for itself beside its doors:
// the store, blobs being written, ffmpeg's pipes, decoders' model files,
// outgoing callbacks and fetches.
const descriptorReserve = 512

// checkDescriptors logs the open files limit and warns when the doors'
// connection bounds could take more than it leaves after descriptorReserve.
// (Go raises the soft limit to the hard one when the process starts, so
// the soft limit read here is the most the daemon can have; the systemd
// unit sets LimitNOFILE.) Each door already keeps within its own bound and
// waits out a failed accept (internal/acceptloop), so this only tells the
// operator which bound to lower or which limit to raise.
func checkDescriptors(log *slog.Logger, doors map[string]int) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		log.Warn("cannot read the open files limit", "error", err)
		return
	}
	need := descriptorReserve
	for _, n := range doors {
		need += n
	}
	if uint64(need) > lim.Cur {
		log.Warn("the doors' connection bounds can exceed the open files limit; lower them or raise LimitNOFILE",
			"open_files_limit", lim.Cur, "needed", need, "doors", doors, "reserve", descriptorReserve)
		return
	}
	log.Info("open files limit", "limit", lim.Cur, "doors_bound", need-descriptorReserve)
}
