package app

import (
	"fmt"
	"log/slog"

	"github.com/earshot-dev/earshot/ingest/rtp"
)

// checkReadQueue logs the receive queue the kernel grants a call door's
// UDP socket (RTP, WebRTC ICE, SIP; rtp.GrantedReadBuffer) and warns,
// naming net.core.rmem_max, when the host caps it below what the sockets
// ask for: the .deb raises the cap (/usr/lib/sysctl.d/30-earshot.conf),
// an install by other means may leave Debian's 208 KiB, with which a
// burst of a call's packets is dropped by the kernel unseen.
func checkReadQueue(log *slog.Logger, granted int, err error) {
	switch {
	case err != nil:
		log.Warn("cannot read the call sockets' receive queue", "error", err)
	case granted < rtp.ReadBuffer:
		log.Warn("the kernel caps the call sockets' receive queue at net.core.rmem_max; raise it to asked_bytes",
			"granted_bytes", granted, "asked_bytes", rtp.ReadBuffer,
			"sysctl", fmt.Sprintf("sysctl -w net.core.rmem_max=%d", rtp.ReadBuffer))
	default:
		log.Info("call sockets' receive queue", "bytes", granted)
	}
}
