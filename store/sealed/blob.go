package sealed

import (
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/earshot-dev/earshot/store"
)

// A sealed blob is a header, magic and an 8-byte random prefix fresh for
// each write, then the clear bytes in chunks of ChunkSize, each sealed with
// AES-256-GCM under the blob's data key with the header as additional data
// and the nonce prefix ‖ index ‖ last-flag: a reordered, dropped, added or
// changed chunk fails, and so does a blob cut anywhere (its last chunk,
// the only one shorter than a full chunk, may be empty). Reading and
// writing stream: one chunk in memory at a time.
const (
	// ChunkSize is the clear bytes of one sealed chunk.
	ChunkSize = 64 << 10
	tagSize   = 16
	headerLen = 12
	lastFlag  = 1 << 31
)

var blobMagic = [4]byte{'E', 'S', 'B', '1'}

// SealedSize is the size a blob of n clear bytes takes sealed.
func SealedSize(n int64) int64 {
	return headerLen + n + (n/ChunkSize+1)*tagSize
}

// clearSize is the clear size of a sealed blob of n bytes (a well-formed
// one; the reader checks).
func clearSize(n int64) int64 {
	n -= headerLen
	if n < tagSize {
		return 0
	}
	full := (n - tagSize) / (ChunkSize + tagSize)
	return n - tagSize*(full+1)
}

func chunkNonce(prefix []byte, idx uint32, last bool) []byte {
	n := make([]byte, 12)
	copy(n, prefix)
	if last {
		idx |= lastFlag
	}
	binary.BigEndian.PutUint32(n[8:], idx)
	return n
}

// chunks is what a reader of chunks has made and not yet handed out: the
// sealing and the opening reader each make the next (step) when a Read
// finds it empty.
type chunks struct {
	idx  uint32 // chunks made
	out  []byte // the rest of the last one made
	done bool   // the last chunk was made
	err  error  // making the next failed
}

// read copies out the chunk at hand, making the next with step first when
// it is used up.
func (c *chunks) read(p []byte, step func()) (int, error) {
	for len(c.out) == 0 {
		if c.err != nil {
			return 0, c.err
		}
		if c.done {
			return 0, io.EOF
		}
		step()
	}
	n := copy(p, c.out)
	c.out = c.out[n:]
	return n, nil
}

// sealReader reads src sealed: the header, then one chunk at a time.
type sealReader struct {
	chunks
	src      io.Reader
	k        cipher.AEAD
	header   []byte
	buf      []byte
	n, limit int64 // clear bytes read; limit 0 = none
	tooLarge bool
}

func newSealReader(k cipher.AEAD, src io.Reader, limit int64) *sealReader {
	h := make([]byte, headerLen)
	copy(h, blobMagic[:])
	_, _ = rand.Read(h[4:])
	return &sealReader{chunks: chunks{out: h}, src: src, k: k, header: h, limit: limit, buf: make([]byte, ChunkSize, ChunkSize+tagSize)}
}

func (s *sealReader) Read(p []byte) (int, error) { return s.read(p, s.fill) }

func (s *sealReader) fill() {
	if s.idx == lastFlag-1 {
		s.err = fmt.Errorf("blob over %d chunks: %w", lastFlag-1, store.ErrTooLarge)
		return
	}
	n, err := io.ReadFull(s.src, s.buf[:ChunkSize])
	last := false
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		last = true
	case err != nil:
		s.err = err
		return
	}
	s.n += int64(n)
	if s.limit > 0 && s.n > s.limit {
		s.tooLarge = true
		s.err = store.ErrTooLarge
		return
	}
	s.out = s.k.Seal(s.buf[:0], chunkNonce(s.header[4:], s.idx, last), s.buf[:n], s.header)
	s.idx++
	s.done = last
}

// openReader reads a sealed blob as its clear bytes; anything that does
// not authenticate is store.ErrIntegrity.
type openReader struct {
	chunks
	r      store.BlobReader
	name   string
	k      cipher.AEAD
	header []byte
	buf    []byte
}

func newOpenReader(k cipher.AEAD, name string, r store.BlobReader) (*openReader, error) {
	h := make([]byte, headerLen)
	if _, err := io.ReadFull(r, h); err != nil || [4]byte(h[:4]) != blobMagic {
		return nil, fmt.Errorf("blob %s: header: %w", name, errIntegrity)
	}
	return &openReader{r: r, name: name, k: k, header: h, buf: make([]byte, ChunkSize+tagSize)}, nil
}

func (o *openReader) Read(p []byte) (int, error) { return o.read(p, o.next) }

func (o *openReader) next() {
	n, err := io.ReadFull(o.r, o.buf)
	last := false
	switch {
	case err == io.EOF:
		o.err = fmt.Errorf("blob %s: cut after chunk %d: %w", o.name, o.idx, errIntegrity)
		return
	case err == io.ErrUnexpectedEOF:
		last = true
	case err != nil:
		o.err = fmt.Errorf("blob %s: %w", o.name, err)
		return
	}
	clear, err := o.k.Open(o.buf[:0], chunkNonce(o.header[4:], o.idx, last), o.buf[:n], o.header)
	if err != nil {
		o.err = fmt.Errorf("blob %s: chunk %d: %w", o.name, o.idx, errIntegrity)
		return
	}
	o.out = clear
	o.idx++
	o.done = last
}

func (o *openReader) Close() error { return o.r.Close() }

// Stat reports the blob's clear size.
func (o *openReader) Stat() (fs.FileInfo, error) {
	fi, err := o.r.Stat()
	if err != nil {
		return nil, err
	}
	return clearInfo{fi}, nil
}

type clearInfo struct{ fs.FileInfo }

func (c clearInfo) Size() int64        { return clearSize(c.FileInfo.Size()) }
func (c clearInfo) ModTime() time.Time { return c.FileInfo.ModTime() }

var _ store.BlobReader = (*openReader)(nil)

// isTooLarge reports whether err came of a limit.
func isTooLarge(s *sealReader, err error) bool {
	return s.tooLarge || errors.Is(err, store.ErrTooLarge)
}
