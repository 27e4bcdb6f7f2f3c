package webrtc

import (
	"strings"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/config"
)

func TestConfig(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string // "" for valid
	}{
		{"defaults", Config{}, ""},
		{"public ip", Config{PublicIP: "203.0.113.7", UDPPorts: "50000-50010"}, ""},
		{"single port", Config{UDPPorts: "50000-50000"}, ""},
		{"not a range", Config{UDPPorts: "50000"}, "webrtc.udp_ports"},
		{"reversed", Config{UDPPorts: "50010-50000"}, "webrtc.udp_ports"},
		{"port zero", Config{UDPPorts: "0-10"}, "webrtc.udp_ports"},
		{"too big", Config{UDPPorts: "1-70000"}, "webrtc.udp_ports"},
		{"bad ip", Config{PublicIP: "example.com"}, "webrtc.public_ip"},
		{"tiny grace", Config{DisconnectGrace: time.Millisecond}, "webrtc.disconnect_grace"},
		{"tiny offer limit", Config{MaxOfferBytes: 10}, "webrtc.max_offer_bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.cfg
			c.SetDefaults()
			err := config.Under("webrtc", c.Validate()) // its keys as the file names them
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("Validate: %v, want an error naming %s", err, tc.wantErr)
			}
		})
	}
	var c Config
	c.SetDefaults()
	if c.UDPPorts != "40000-40999" || c.DisconnectGrace != 30*time.Second || c.Disabled {
		t.Errorf("defaults %+v", c)
	}
}
