package codectest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os/exec"
)

// ffmpeg runs ffmpeg on wav with args between input and "-" output.
func ffmpeg(wav string, args ...string) ([]byte, error) {
	cmd := exec.Command("ffmpeg", append(append([]string{"-nostdin", "-v", "error", "-i", wav}, args...), "-")...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("ffmpeg: %v: %s", err, stderr.String())
	}
	return out, nil
}

// PCM16k is wav as 16 kHz mono 16-bit samples (ffmpeg's resampler).
func PCM16k(wav string) ([]int16, error) { return pcm(wav, 16000) }

// PCM8k is wav as 8 kHz mono 16-bit samples: telephone-band audio before
// G.711 encoding.
func PCM8k(wav string) ([]int16, error) { return pcm(wav, 8000) }

func pcm(wav string, rate int) ([]int16, error) {
	b, err := ffmpeg(wav, "-ac", "1", "-ar", fmt.Sprint(rate), "-f", "s16le")
	if err != nil {
		return nil, err
	}
	pcm := make([]int16, len(b)/2)
	for i := range pcm {
		pcm[i] = int16(binary.LittleEndian.Uint16(b[2*i:]))
	}
	return pcm, nil
}

// G722 is wav encoded as 64 kbit/s G.722 by ffmpeg: the RTP payload bytes
// of a call, 160 per 20 ms.
func G722(wav string) ([]byte, error) {
	return ffmpeg(wav, "-ac", "1", "-ar", "16000", "-acodec", "g722", "-f", "g722")
}

// OpusPackets is wav encoded by libopus (through ffmpeg) as a browser sends
// it: mono voice at 48 kHz in 20 ms packets of about bitrate bits/s, one
// RTP payload each.
func OpusPackets(wav string, bitrate int) ([][]byte, error) {
	ogg, err := ffmpeg(wav, "-ac", "1", "-ar", "48000", "-acodec", "libopus", "-application", "voip",
		"-frame_duration", "20", "-b:a", fmt.Sprint(bitrate), "-f", "ogg")
	if err != nil {
		return nil, err
	}
	pkts, err := oggPackets(ogg)
	if err != nil {
		return nil, err
	}
	if len(pkts) < 2 {
		return nil, errors.New("codectest: ogg holds no audio packets")
	}
	return pkts[2:], nil // OpusHead and OpusTags come first
}

// oggPackets splits an Ogg stream (RFC 3533) into its packets.
func oggPackets(b []byte) ([][]byte, error) {
	var pkts [][]byte
	var cur []byte
	for len(b) > 0 {
		if len(b) < 27 || string(b[:4]) != "OggS" {
			return nil, errors.New("codectest: not an ogg page")
		}
		nseg := int(b[26])
		if len(b) < 27+nseg {
			return nil, errors.New("codectest: short ogg page")
		}
		lace := b[27 : 27+nseg]
		body := b[27+nseg:]
		for _, l := range lace {
			if len(body) < int(l) {
				return nil, errors.New("codectest: short ogg segment")
			}
			cur = append(cur, body[:l]...)
			body = body[l:]
			if l < 255 {
				pkts = append(pkts, cur)
				cur = nil
			}
		}
		b = body
	}
	return pkts, nil
}
