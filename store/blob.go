package store

import "strings"

// TempBlobPrefix starts the names of blobs being written. Open removes such
// files (left by a crash), so ValidName refuses names with this prefix.
const TempBlobPrefix = ".tmp-"

// maxBlobName is the longest valid blob name.
const maxBlobName = 128

// ValidName reports whether name can name a blob: [A-Za-z0-9._-]{1,128},
// not "." or "..", and not starting with ".tmp-" (reserved for partial
// writes). Such a name can never leave the blob directory.
func ValidName(name string) bool {
	if len(name) == 0 || len(name) > maxBlobName || name == "." || name == ".." ||
		strings.HasPrefix(name, TempBlobPrefix) {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !NameByte(name[i]) {
			return false
		}
	}
	return true
}
