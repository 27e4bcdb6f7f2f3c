package app

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/earshot-dev/earshot/store"
)

// reloadOnHangup calls each reload on every SIGHUP until ctx ends (the
// doors closing): the SIP door's TLS certificate (sip.tls_cert, tls_key),
// renewed on disk, is taken without a restart and without dropping a
// call. A failed reload is logged; what was loaded before stays. Every
// SIGHUP is recorded in the audit trail (config.reload, source "signal",
// status 200, or 500 when a reload failed), with no reload to do too.
func reloadOnHangup(ctx context.Context, log *slog.Logger, record func(store.AuditEntry), reloads ...func() error) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			log.Info("reloading on SIGHUP")
			status := 200
			for _, reload := range reloads {
				if err := reload(); err != nil {
					log.Error("reload failed; keeping what was loaded", "error", err)
					status = 500
				}
			}
			record(store.AuditEntry{Source: "signal", Action: store.AuditConfigReload, Status: status})
		}
	}
}
