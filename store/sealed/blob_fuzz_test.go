package sealed

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"errors"
	"io"
	"io/fs"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/store"
)

// bytesBlob is a store.BlobReader over bytes in memory.
type bytesBlob struct{ *bytes.Reader }

func (bytesBlob) Close() error { return nil }
func (b bytesBlob) Stat() (fs.FileInfo, error) {
	return blobInfo{size: b.Size()}, nil
}

type blobInfo struct {
	fs.FileInfo
	size int64
}

func (i blobInfo) Size() int64        { return i.size }
func (i blobInfo) ModTime() time.Time { return time.Time{} }

// FuzzOpenBlob: the opening reader takes any bytes as a stored blob and
// either gives back the clear bytes of a blob sealed under its key (only
// the seeds here: forging a chunk would break AES-GCM) or fails with
// store.ErrIntegrity; it never returns other bytes and never panics.
func FuzzOpenBlob(f *testing.F) {
	block, err := aes.NewCipher(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		f.Fatal(err)
	}
	k, err := cipher.NewGCM(block)
	if err != nil {
		f.Fatal(err)
	}
	// The seeds are sealed with a fixed blob prefix, not a random one, so
	// that every fuzzing process makes the same authentic blobs.
	seal := func(clear []byte) []byte {
		sr := newSealReader(k, bytes.NewReader(clear), 0)
		copy(sr.header[4:], bytes.Repeat([]byte{9}, len(sr.header)-4))
		b, err := io.ReadAll(sr)
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	authentic := map[string][]byte{}
	for _, clear := range [][]byte{nil, []byte("RIFF speech"), bytes.Repeat([]byte{0x55}, ChunkSize+100)} {
		b := seal(clear)
		authentic[string(b)] = clear
		f.Add(b)
		f.Add(b[:len(b)-1])
		f.Add(append(append([]byte(nil), b...), 0))
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, sealed []byte) {
		r, err := newOpenReader(k, "fuzz", bytesBlob{bytes.NewReader(sealed)})
		var got []byte
		if err == nil {
			got, err = io.ReadAll(r)
		}
		want, ok := authentic[string(sealed)]
		switch {
		case ok && (err != nil || !bytes.Equal(got, want)):
			t.Fatalf("an authentic blob opened to %d bytes, %v; want its %d clear bytes", len(got), err, len(want))
		case !ok && err == nil:
			t.Fatalf("%d bytes that no one sealed opened to %d bytes", len(sealed), len(got))
		case !ok && !errors.Is(err, store.ErrIntegrity):
			t.Fatalf("a forged blob failed with %v, not ErrIntegrity", err)
		}
	})
}
