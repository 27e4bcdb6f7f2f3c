package codec

import "github.com/pion/sdp/v3"

// Direction is the media direction an SDP attribute list states
// (sendrecv, sendonly, recvonly or inactive; RFC 3264 section 5.1), or ""
// when it states none: the caller falls back from a media line to the
// session level, then to sendrecv. Both call doors read offers with it.
func Direction(attrs []sdp.Attribute) string {
	for _, a := range attrs {
		switch a.Key {
		case "sendrecv", "sendonly", "recvonly", "inactive":
			return a.Key
		}
	}
	return ""
}
