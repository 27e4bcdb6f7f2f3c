package store

import "time"

// MaxFilenameBytes bounds Upload.Filename and Extension: a filename is
// copied into every job that names the upload, so it must stay short
// (255 bytes, as most file systems allow).
const MaxFilenameBytes = 255

// Upload is an audio file uploaded ahead of a job that names it.
type Upload struct {
	ID            string    `json:"id"`
	Account       string    `json:"account"`
	Filename      string    `json:"filename"`
	Extension     string    `json:"extension"`
	Size          int64     `json:"size"`           // bytes
	AudioDuration float64   `json:"audio_duration"` // seconds
	Channels      int       `json:"channels"`
	CreatedAt     time.Time `json:"created_at"`
	Blob          string    `json:"blob"` // blob holding the bytes
}

// SealedPrefix starts a record field that a sealing layer (store/sealed)
// encrypted: the text is the prefix and the base64url of a nonce and an
// AES-GCM ciphertext. Backends keep it as any string.
const SealedPrefix = "es1."

// maxSealedFilename bounds a sealed Filename: MaxFilenameBytes sealed
// (12-byte nonce, 16-byte tag) in unpadded base64url, with SealedPrefix.
const maxSealedFilename = len(SealedPrefix) + ((MaxFilenameBytes+28)*4+2)/3
