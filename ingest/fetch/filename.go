package fetch

import (
	"path"
	"strings"
	"unicode/utf8"

	"github.com/earshot-dev/earshot/store"
)

// maxExtBytes is the longest extension storedName keeps whole when it
// shortens a name (".wav", ".flac", ".opus"); a longer "extension" is
// part of the name.
const maxExtBytes = 16

// storedName applies the upload's filename rule (store.MaxFilenameBytes,
// 255 bytes, NAME_MAX of common file systems) to a name a remote server
// chose. An upload over it is refused with 400, since its client can
// rename the file; a fetched file cannot be renamed by its client, and its
// audio is good, so its name is shortened instead: bytes that are not
// UTF-8 become U+FFFD, and a longer name keeps its extension and as much
// of the rest as fits, cut on a UTF-8 boundary ("<first 251 bytes>.wav").
// The extension matters: GET .../file answers the job's audio with the
// content type it names.
func storedName(name string) string {
	name = strings.ToValidUTF8(name, "\uFFFD")
	if len(name) <= store.MaxFilenameBytes {
		return name
	}
	ext := path.Ext(name)
	if len(ext) > maxExtBytes || !utf8.ValidString(ext) {
		ext = ""
	}
	stem := name[:len(name)-len(ext)]
	return cutUTF8(stem, store.MaxFilenameBytes-len(ext)) + ext
}

// cutUTF8 returns the longest prefix of s of at most n bytes that ends on
// a rune boundary.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
