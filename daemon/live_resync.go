package daemon

import (
	"bytes"

	"github.com/earshot-dev/earshot/ingest/media"
)

// resyncWindow bounds how far behind the last ack sent a reconnecting
// client's resend may start (acks in flight when the connection broke).
const resyncWindow = 1 << 20

// overlapLocked returns how many leading bytes of a reconnected client's
// frame were already taken in, and the client's offset of the frame. The
// first frame is located in the stored tail (the largest overlap whose
// bytes match, ignoring constant runs such as digital silence, which could
// match anywhere); later frames continue from there until the overlap is
// used up. A frame that matches nothing ends the check: it is new audio.
func (s *liveSession) overlapLocked(audio []byte) (int, int64) {
	sent := s.received
	if s.cursor < 0 {
		lo := max(s.header, sent-resyncWindow)
		lo += (sent - lo) % int64(s.format.FrameSize()) // frame-aligned from the end
		tail := make([]byte, sent-lo)
		if _, err := s.file.ReadAt(tail, media.WAVHeaderSize+lo-s.header); err != nil {
			s.resync = false
			return 0, sent
		}
		s.cursor = -1
		for x := lo; x < sent; x += int64(s.format.FrameSize()) {
			n := min(int64(len(audio)), sent-x)
			cand := tail[x-lo : x-lo+n]
			if bytes.Equal(cand, audio[:n]) && !constant(cand) {
				s.cursor = x
				break
			}
		}
		if s.cursor < 0 {
			s.resync = false
			return 0, sent
		}
	}
	n := min(int64(len(audio)), sent-s.cursor)
	stored := make([]byte, n)
	if _, err := s.file.ReadAt(stored, media.WAVHeaderSize+s.cursor-s.header); err != nil || !bytes.Equal(stored, audio[:n]) {
		s.resync = false
		return 0, sent
	}
	from := s.cursor
	s.cursor += n
	if s.cursor >= sent {
		s.resync = false
	}
	return int(n), from
}

// constant reports whether every byte of b is the same.
func constant(b []byte) bool {
	for _, c := range b {
		if c != b[0] {
			return false
		}
	}
	return true
}
