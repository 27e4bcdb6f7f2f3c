package pipeline

import (
	"context"
	"errors"
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
