package webrtc

import (
	"errors"
	"testing"
)

const offerHead = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n"

func TestCheckOffer(t *testing.T) {
	tests := []struct {
		name       string
		sdp        string
		want       error
		pcmu, pcma bool
	}{
		{"static PCMU", offerHead + "m=audio 9 UDP/TLS/RTP/SAVPF 0\r\n", nil, true, false},
		{"dynamic PCMA by rtpmap", offerHead + "m=audio 9 UDP/TLS/RTP/SAVPF 96\r\na=rtpmap:96 pcma/8000\r\n", nil, false, true},
		{"baresip", offerHead + "m=audio 9 RTP/AVP 0 8 101\r\na=rtpmap:101 telephone-event/8000\r\na=ptime:20\r\n", nil, true, true},
		{"opus only", offerHead + "m=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=rtpmap:111 opus/48000/2\r\n", ErrNoG711, false, false},
		{"PCMU at 16 kHz is not G.711", offerHead + "m=audio 9 UDP/TLS/RTP/SAVPF 96\r\na=rtpmap:96 PCMU/16000\r\n", ErrNoG711, false, false},
		{"recvonly audio", offerHead + "m=audio 9 UDP/TLS/RTP/SAVPF 0\r\na=recvonly\r\n", ErrBadOffer, false, false},
		{"session-level inactive", offerHead + "a=inactive\r\nm=audio 9 UDP/TLS/RTP/SAVPF 0\r\n", ErrBadOffer, false, false},
		{"rejected m-line", offerHead + "m=audio 0 UDP/TLS/RTP/SAVPF 0\r\n", ErrBadOffer, false, false},
		{"video only", offerHead + "m=video 9 UDP/TLS/RTP/SAVPF 96\r\na=rtpmap:96 VP8/90000\r\n", ErrBadOffer, false, false},
		{"garbage", "hello", ErrBadOffer, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := checkOffer([]byte(tc.sdp))
			if !errors.Is(err, tc.want) {
				t.Fatalf("checkOffer: %v, want %v", err, tc.want)
			}
			if err == nil && (o.pcmu != tc.pcmu || o.pcma != tc.pcma) {
				t.Errorf("got %+v, want pcmu %v pcma %v", o, tc.pcmu, tc.pcma)
			}
		})
	}
}

// FuzzCheckOffer: any input gets an answer or one of the two offer errors,
// never a panic.
func FuzzCheckOffer(f *testing.F) {
	f.Add([]byte(offerHead + "m=audio 9 UDP/TLS/RTP/SAVPF 0 8\r\na=rtpmap:0 PCMU/8000\r\na=sendonly\r\n"))
	f.Add([]byte(offerHead + "m=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=rtpmap:111 opus/48000/2\r\n"))
	f.Add([]byte("v=0\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := checkOffer(b)
		if err != nil && !errors.Is(err, ErrBadOffer) && !errors.Is(err, ErrNoG711) {
			t.Fatalf("unexpected error %v", err)
		}
		if err == nil && !o.pcmu && !o.pcma {
			t.Fatalf("no error but no codec")
		}
	})
}
