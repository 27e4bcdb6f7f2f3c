package pipeline

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/ingest/media"
)

// ProbeFile describes the audio file at path and checks it against the
// bounds TranscribeFile decodes it under (t.Media: channels, duration,
// decoded bytes), so that a file can be refused before it is kept or
// queued. Audio over a bound wraps errcode.ErrTooLarge with a message
// naming audio and the limit; a file that cannot be probed as audio wraps
// errcode.ErrBadAudio.
func (t *Transcriber) ProbeFile(ctx context.Context, path string) (media.Info, error) {
	info, err := media.Probe(ctx, path, &t.Media)
	return t.checkProbed(info, err)
}

// ProbeWAV is ProbeFile for a WAV read from a stream of size bytes (a
// sealed blob, decrypted as it is read): only its header is read
// (media.ProbeWAV). isWAV false with a nil error means the stream is not a
// WAV decoded in Go: ProbeFile a file of it instead. An error reading r
// is returned as it is, not as the audio's.
func (t *Transcriber) ProbeWAV(r io.Reader, size int64) (info media.Info, isWAV bool, err error) {
	info, isWAV, err = media.ProbeWAV(r, size)
	switch {
	case err != nil && !errors.Is(err, media.ErrCorrupt):
		return media.Info{}, false, err // the stream's own (a store's), not the audio's
	case !isWAV && err == nil:
		return media.Info{}, false, nil
	}
	info, err = t.checkProbed(info, err)
	return info, true, err
}

// checkProbed checks what a probe found against t.Media's bounds and turns
// a probe's or a bound's error into the contract's.
func (t *Transcriber) checkProbed(info media.Info, err error) (media.Info, error) {
	if err == nil {
		err = media.CheckLimits(info, &t.Media)
	}
	if err == nil {
		return info, nil
	}
	if aerr := t.audioError(err); aerr != nil {
		return media.Info{}, aerr
	}
	return media.Info{}, newError(errcode.ErrBadAudio, err, ReasonNotAudio)
}

// audioError is the contract's error for an error of media.Probe,
// media.CheckLimits or media.Decode: audio over a bound wraps
// errcode.ErrTooLarge, unreadable audio errcode.ErrBadAudio, each with its
// reason; nil for any other error (I/O, cancellation). Too many channels
// is checked before unreadable audio, whose error it also wraps.
func (t *Transcriber) audioError(err error) error {
	o := t.Media
	o.SetDefaults()
	switch {
	case errors.Is(err, media.ErrTooLong):
		return newError(errcode.ErrTooLarge, err, ReasonTooLong, o.MaxDuration)
	case errors.Is(err, media.ErrTooMuchAudio):
		return newError(errcode.ErrTooLarge, err, ReasonTooMuchAudio,
			time.Duration(o.MaxDecodedBytes/media.DecodedBytesPerSecond)*time.Second)
	case errors.Is(err, media.ErrTooManyChannels):
		return newError(errcode.ErrTooLarge, err, ReasonTooManyChannels, media.MaxChannels)
	case errors.Is(err, media.ErrUnsupported), errors.Is(err, media.ErrCorrupt):
		return newError(errcode.ErrBadAudio, err, ReasonNotAudio)
	}
	return nil
}
