package params

import "github.com/google/uuid"

// ValidID reports whether id has the form of a job or file id (a UUID in
// its 36-character form), as a request path or audio_url names one.
func ValidID(id string) bool {
	_, err := uuid.Parse(id)
	return err == nil && len(id) == 36
}
