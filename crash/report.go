package crash

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
)

// The report's files in the data directory.
const (
	// File receives this run's fatal-error report.
	File = "crash.log"
	// PrevFile keeps the report of the last run that crashed.
	PrevFile = "crash.prev.log"
	// excerpt bounds how much of a report goes to the log.
	excerpt = 2048
)

// Arm reads the report the last run left in dataDir (crashed is true when
// there was one), keeps it as PrevFile and logs an excerpt at error level,
// then directs this run's fatal-error report to a fresh File.
func Arm(dataDir string, log *slog.Logger) (crashed bool, err error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	path := filepath.Join(dataDir, File)
	if f, err := os.Open(path); err == nil {
		head, _ := io.ReadAll(io.LimitReader(f, excerpt))
		f.Close()
		if len(head) > 0 {
			crashed = true
			prev := filepath.Join(dataDir, PrevFile)
			if err := os.Rename(path, prev); err != nil {
				return crashed, fmt.Errorf("keep crash report: %w", err)
			}
			log.Error("the last run crashed; jobs it was processing are not retried",
				"report", prev, "excerpt", string(head))
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("read crash report: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return crashed, fmt.Errorf("open crash report: %w", err)
	}
	defer f.Close() // SetCrashOutput keeps its own descriptor
	if err := debug.SetCrashOutput(f, debug.CrashOptions{}); err != nil {
		return crashed, fmt.Errorf("set crash report: %w", err)
	}
	return crashed, nil
}
