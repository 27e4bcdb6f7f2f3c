package rtp

import (
	"github.com/zaf/g711"

	"github.com/earshot-dev/earshot/ingest/codec"
)

// transcode rewrites b in place from one G.711 law to the other (a codec
// change by re-INVITE mid-call); same laws and other codecs are left alone.
func transcode(b []byte, from, to codec.Codec) {
	switch {
	case from == to || !from.G711() || !to.G711():
	case from == codec.PCMA:
		for i, v := range b {
			b[i] = g711.Alaw2UlawFrame(v)
		}
	default:
		for i, v := range b {
			b[i] = g711.Ulaw2AlawFrame(v)
		}
	}
}
