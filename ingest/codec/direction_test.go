package codec

import (
	"testing"

	"github.com/pion/sdp/v3"
)

func TestDirection(t *testing.T) {
	for _, c := range []struct {
		attrs []sdp.Attribute
		want  string
	}{
		{nil, ""},
		{[]sdp.Attribute{{Key: "rtpmap", Value: "0 PCMU/8000"}}, ""},
		{[]sdp.Attribute{{Key: "rtpmap", Value: "0 PCMU/8000"}, {Key: "sendonly"}}, "sendonly"},
		{[]sdp.Attribute{{Key: "inactive"}, {Key: "sendrecv"}}, "inactive"},
	} {
		if got := Direction(c.attrs); got != c.want {
			t.Errorf("%v: %q, want %q", c.attrs, got, c.want)
		}
	}
}
