package live

import (
	"bytes"
	"fmt"
	"time"

	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/store"
)

// recording is a session's WAV file, written from the first byte: a
// header of unknown length, then the whole frames as they come; finalize
// writes the real sizes. Its session's goroutine owns it.
type recording struct {
	file     RecordingFile
	audio    int64 // audio bytes in file
	lastSync time.Time
}

// createRecording creates (truncating) a session's WAV file with a header
// of unknown length, ready for appending.
func createRecording(rs Recordings, path string, f media.Format) (*recording, error) {
	file, err := rs.CreateRecording(path)
	if err == nil {
		_, err = file.Write(media.AppendWAVHeader(nil, f, -1))
		if err != nil {
			file.Close()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("create recording: %w", store.NoSpace(err))
	}
	return &recording{file: file}, nil
}

// write appends whole frames, syncing at most once a second.
func (r *recording) write(frames []byte) error {
	if _, err := r.file.Write(frames); err != nil {
		return fmt.Errorf("store audio: %w", store.NoSpace(err))
	}
	r.audio += int64(len(frames))
	if time.Since(r.lastSync) > time.Second {
		r.file.Sync()
		r.lastSync = time.Now()
	}
	return nil
}

// close closes the file as it is (a session that never started).
func (r *recording) close() {
	if r.file != nil {
		r.file.Close()
		r.file = nil
	}
}

// finalize writes the real sizes into the WAV header, syncs and closes
// the file; it returns the file's path ("" when it was closed already).
func (r *recording) finalize(f media.Format) (string, error) {
	if r.file == nil {
		return "", nil
	}
	_, err := r.file.WriteAt(media.AppendWAVHeader(nil, f, r.audio), 0)
	if err != nil {
		err = fmt.Errorf("finalise recording header: %w", store.NoSpace(err))
	}
	r.file.Sync()
	path := r.file.Name()
	r.close()
	return path, err
}

// resyncWindow bounds how far behind the last ack sent a reconnecting
// client's resend may start (acks in flight when the connection broke).
const resyncWindow = 1 << 20

// overlap returns how many leading bytes of a reconnected client's frame
// were already taken in, and the client's offset of the frame. The first
// frame is located in the stored tail (the largest overlap whose bytes
// match, ignoring constant runs such as digital silence, which could match
// anywhere); later frames continue from there until the overlap is used
// up. A frame that matches nothing ends the check: it is new audio.
func (s *session) overlap(audio []byte) (int, int64) {
	sent := s.received
	if s.cursor < 0 {
		lo := max(s.header, sent-resyncWindow)
		lo += (sent - lo) % int64(s.format.FrameSize()) // frame-aligned from the end
		tail := make([]byte, sent-lo)
		if _, err := s.rec.file.ReadAt(tail, media.WAVHeaderSize+lo-s.header); err != nil {
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
	if _, err := s.rec.file.ReadAt(stored, media.WAVHeaderSize+s.cursor-s.header); err != nil || !bytes.Equal(stored, audio[:n]) {
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
