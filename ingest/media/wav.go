package media

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// WAV format tags (wFormatTag) this package decodes; WAVE_FORMAT_EXTENSIBLE
// carries one of them in the first two bytes of its SubFormat GUID.
const (
	wavTagPCM        = 0x0001
	wavTagFloat      = 0x0003
	wavTagALaw       = 0x0006
	wavTagMuLaw      = 0x0007
	wavTagExtensible = 0xFFFE
)

// Bounds that keep ReadWAVHeader finite on hostile input.
const (
	maxWAVChunks   = 128  // chunks examined before the data chunk
	maxFmtChunkLen = 1024 // a real fmt chunk is 16, 18 or 40 bytes
	maxDS64Len     = 4096 // RF64 ds64 chunk (28 bytes plus a small table)
)

// ReadWAVHeader parses a RIFF/WAVE (or RF64) header up to the start of the
// data chunk, skipping LIST, fact and other chunks and handling
// WAVE_FORMAT_EXTENSIBLE. It returns the format and the data length in bytes,
// or -1 when the header says 0 or 0xFFFFFFFF (a stream written before its
// length was known). r is left at the first data byte.
//
// Errors wrap ErrCorrupt (truncated or inconsistent header) or ErrUnsupported
// (not RIFF/WAVE, or an encoding or bit depth we do not decode; the header is
// still well-formed, so a caller may hand the file to ffmpeg instead). It
// reads at most the header plus the skipped chunks, allocates at most
// maxFmtChunkLen bytes and examines at most maxWAVChunks chunks.
func ReadWAVHeader(r io.Reader) (Format, int64, error) {
	var hdr [12]byte
	if err := readFull(r, hdr[:], "riff header"); err != nil {
		return Format{}, 0, err
	}
	riff := string(hdr[0:4])
	if (riff != "RIFF" && riff != "RF64") || string(hdr[8:12]) != "WAVE" {
		return Format{}, 0, fmt.Errorf("%w: not a RIFF/WAVE file", ErrUnsupported)
	}
	var (
		f         Format
		fmtErr    error
		haveFmt   bool
		ds64Data  int64 = -1
		chunkHead [8]byte
	)
	for range maxWAVChunks {
		if err := readFull(r, chunkHead[:], "chunk header"); err != nil {
			return Format{}, 0, err
		}
		id := string(chunkHead[0:4])
		size := int64(binary.LittleEndian.Uint32(chunkHead[4:8]))
		switch id {
		case "ds64":
			if riff != "RF64" || size < 28 || size > maxDS64Len {
				return Format{}, 0, fmt.Errorf("%w: ds64 chunk of %d bytes", ErrCorrupt, size)
			}
			b := make([]byte, size+size%2)
			if err := readFull(r, b, "ds64 chunk"); err != nil {
				return Format{}, 0, err
			}
			ds64Data = int64(binary.LittleEndian.Uint64(b[8:16]))
			continue
		case "fmt ":
			if size < 16 || size > maxFmtChunkLen {
				return Format{}, 0, fmt.Errorf("%w: fmt chunk of %d bytes (want 16..%d)", ErrCorrupt, size, maxFmtChunkLen)
			}
			b := make([]byte, size+size%2)
			if err := readFull(r, b, "fmt chunk"); err != nil {
				return Format{}, 0, err
			}
			f, fmtErr = parseFmt(b[:size])
			if fmtErr != nil && !errors.Is(fmtErr, ErrUnsupported) {
				return Format{}, 0, fmtErr
			}
			haveFmt = true
			continue
		case "data":
			if !haveFmt {
				return Format{}, 0, fmt.Errorf("%w: data chunk before fmt chunk", ErrCorrupt)
			}
			if fmtErr != nil {
				return f, 0, fmtErr
			}
			n := size
			switch {
			case riff == "RF64" && size == 0xFFFFFFFF && ds64Data > 0:
				n = ds64Data
			case size == 0 || size == 0xFFFFFFFF:
				n = -1
			}
			return f, n, nil
		}
		// Skip any other chunk, with its pad byte when the size is odd.
		skip := size + size%2
		if n, err := io.CopyN(io.Discard, r, skip); err != nil {
			return Format{}, 0, fmt.Errorf("%w: %q chunk of %d bytes truncated after %d", ErrCorrupt, id, size, n)
		}
	}
	return Format{}, 0, fmt.Errorf("%w: no data chunk within %d chunks", ErrCorrupt, maxWAVChunks)
}

// parseFmt decodes a fmt chunk body. A well-formed chunk with an encoding we
// do not decode returns the partial Format and an error wrapping
// ErrUnsupported.
func parseFmt(b []byte) (Format, error) {
	le := binary.LittleEndian
	tag := le.Uint16(b[0:2])
	channels := int(le.Uint16(b[2:4]))
	rate := int(le.Uint32(b[4:8]))
	blockAlign := int(le.Uint16(b[12:14]))
	bits := int(le.Uint16(b[14:16]))
	if tag == wavTagExtensible {
		if len(b) < 40 {
			return Format{}, fmt.Errorf("%w: extensible fmt chunk of %d bytes (want 40)", ErrCorrupt, len(b))
		}
		tag = le.Uint16(b[24:26]) // SubFormat GUID's first two bytes
	}
	if channels == 0 || rate == 0 {
		return Format{}, fmt.Errorf("%w: fmt says %d channels at %d Hz", ErrCorrupt, channels, rate)
	}
	f := Format{SampleRate: rate, Channels: channels, BitDepth: bits}
	switch tag {
	case wavTagPCM:
		f.Encoding = LinearPCM
	case wavTagFloat:
		f.Encoding = Float
	case wavTagALaw:
		f.Encoding = ALaw
	case wavTagMuLaw:
		f.Encoding = MuLaw
	default:
		return f, fmt.Errorf("%w: wav format tag 0x%04x", ErrUnsupported, tag)
	}
	// Samples sit in whole-byte containers; block align gives the container
	// (20-bit in 24, 24-bit in 32 when it is left-justified as the spec says).
	if blockAlign > 0 && blockAlign%channels == 0 {
		if c := blockAlign / channels * 8; c >= bits && c-bits < 8 || f.Encoding == LinearPCM && c == 32 && bits == 24 {
			f.BitDepth = c
		}
	}
	if err := f.Validate(); err != nil {
		return f, err
	}
	if blockAlign != f.FrameSize() {
		return Format{}, fmt.Errorf("%w: block align %d, want %d for %d channels of %d bits",
			ErrCorrupt, blockAlign, f.FrameSize(), channels, f.BitDepth)
	}
	return f, nil
}

// readFull reads len(b) bytes or returns an error wrapping ErrCorrupt.
func readFull(r io.Reader, b []byte, what string) error {
	n, err := io.ReadFull(r, b)
	if err == nil {
		return nil
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: %s truncated at %d of %d bytes", ErrCorrupt, what, n, len(b))
	}
	return fmt.Errorf("media: read %s: %w", what, err)
}

// WAVHeaderSize is the size of the canonical header AppendWAVHeader writes.
const WAVHeaderSize = 44

// AppendWAVHeader appends a canonical 44-byte RIFF/WAVE header for f to b
// (LinearPCM, ALaw or MuLaw). dataLen < 0
// writes the "unknown length" sizes (0xFFFFFFFF) that readers, ReadWAVHeader
// included, take as "to the end of the file", so a recording can be
// appended to before its length is known.
func AppendWAVHeader(b []byte, f Format, dataLen int64) []byte {
	tag := uint16(wavTagPCM)
	switch f.Encoding {
	case ALaw:
		tag = wavTagALaw
	case MuLaw:
		tag = wavTagMuLaw
	}
	riff, data := uint32(0xFFFFFFFF), uint32(0xFFFFFFFF)
	if dataLen >= 0 {
		riff, data = uint32(36+dataLen), uint32(dataLen)
	}
	le := binary.LittleEndian
	bpf := f.FrameSize()
	b = append(b, "RIFF"...)
	b = le.AppendUint32(b, riff)
	b = append(b, "WAVEfmt "...)
	b = le.AppendUint32(b, 16) // fmt chunk size
	b = le.AppendUint16(b, tag)
	b = le.AppendUint16(b, uint16(f.Channels))
	b = le.AppendUint32(b, uint32(f.SampleRate))
	b = le.AppendUint32(b, uint32(f.SampleRate*bpf)) // byte rate
	b = le.AppendUint16(b, uint16(bpf))              // block align
	b = le.AppendUint16(b, uint16(f.BitDepth))
	b = append(b, "data"...)
	return le.AppendUint32(b, data)
}
