package webrtc

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/pion/logging"
)

// pionLogs routes pion's logs to the door's logger: pion's errors are
// handled degradations (a bad packet, a failed DTLS alert) and log at warn,
// the rest at debug; trace is dropped.
type pionLogs struct {
	log *slog.Logger
}

// NewLogger implements logging.LoggerFactory.
func (f *pionLogs) NewLogger(scope string) logging.LeveledLogger {
	return pionLogger{f.log.With("pion", scope)}
}

type pionLogger struct{ l *slog.Logger }

func (p pionLogger) Trace(string)          {}
func (p pionLogger) Tracef(string, ...any) {}
func (p pionLogger) Debug(msg string)      { p.l.Debug(msg) }
func (p pionLogger) Debugf(format string, args ...any) {
	p.debugf(format, args...)
}
func (p pionLogger) Info(msg string) { p.l.Debug(msg) }
func (p pionLogger) Infof(format string, args ...any) {
	p.debugf(format, args...)
}
func (p pionLogger) Warn(msg string) { p.l.Debug(msg) }
func (p pionLogger) Warnf(format string, args ...any) {
	p.debugf(format, args...)
}
func (p pionLogger) Error(msg string) { p.l.Warn(msg) }
func (p pionLogger) Errorf(format string, args ...any) {
	p.l.Warn(fmt.Sprintf(format, args...))
}

// debugf formats only when debug is on (pion logs on hot paths).
func (p pionLogger) debugf(format string, args ...any) {
	if p.l.Enabled(context.Background(), slog.LevelDebug) {
		p.l.Debug(fmt.Sprintf(format, args...))
	}
}
