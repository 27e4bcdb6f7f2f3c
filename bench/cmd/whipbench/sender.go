package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"time"

	"github.com/pion/rtp"
)

// ---- the sender process ----

func runSender(mode string, n int, dur time.Duration, wav string) error {
	audio, err := exec.Command("ffmpeg", "-v", "error", "-i", wav, "-ar", "8000", "-ac", "1", "-f", "mulaw", "-").Output()
	if err != nil {
		return fmt.Errorf("ffmpeg: %w", err)
	}
	audio = audio[:len(audio)/packetLen*packetLen]
	enc, dec := json.NewEncoder(os.Stdout), json.NewDecoder(bufio.NewReader(os.Stdin))
	var send func(i int, p *rtp.Packet) error
	if mode == "webrtc" {
		offs := make([]*offerer, n)
		for i := range n {
			o, err := newOfferer()
			if err != nil {
				return err
			}
			defer o.pc.Close()
			sdp, err := o.offer()
			if err != nil {
				return err
			}
			if err := enc.Encode(msg{Kind: "offer", Index: i, SDP: string(sdp)}); err != nil {
				return err
			}
			var m msg
			if err := dec.Decode(&m); err != nil {
				return err
			}
			if err := o.connect([]byte(m.SDP), 10*time.Second); err != nil {
				return err
			}
			offs[i] = o
		}
		send = func(i int, p *rtp.Packet) error { return offs[i].track.WriteRTP(p) }
	} else {
		var m msg
		if err := dec.Decode(&m); err != nil {
			return err
		}
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			return err
		}
		defer c.Close()
		buf := make([]byte, 1500)
		send = func(i int, p *rtp.Packet) error {
			b, err := p.MarshalTo(buf)
			if err != nil {
				return err
			}
			_, err = c.WriteToUDP(buf[:b], &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: m.Ports[i]})
			return err
		}
	}
	// Let the connections settle (DTLS done, first RTCP) before measuring.
	warm := time.NewTimer(time.Second)
	<-warm.C
	if err := enc.Encode(msg{Kind: "streaming"}); err != nil {
		return err
	}
	var goMsg msg
	if err := dec.Decode(&goMsg); err != nil { // the door has read its CPU
		return err
	}
	cpu0 := selfCPU()
	packets := int(dur / packetDur)
	start := time.Now()
	pkt := &rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 0}}
	timer := time.NewTimer(0)
	for k := range packets {
		<-timer.C
		for i := range n {
			// Each session starts at another point of the clip.
			off := ((k + i*len(audio)/packetLen/n) * packetLen) % len(audio)
			pkt.SequenceNumber, pkt.Timestamp, pkt.SSRC = uint16(k), uint32(k*packetLen), uint32(1000+i)
			pkt.Payload = audio[off : off+packetLen]
			if err := send(i, pkt); err != nil {
				return err
			}
		}
		timer.Reset(time.Until(start.Add(time.Duration(k+1) * packetDur)))
	}
	// Packets in flight reach the sink before done is read.
	<-timer.C
	drain := time.NewTimer(200 * time.Millisecond)
	<-drain.C
	if err := enc.Encode(msg{Kind: "done", Sent: int64(packets * packetLen), CPU: selfCPU() - cpu0}); err != nil {
		return err
	}
	var m msg
	dec.Decode(&m) // bye: the door has read its CPU
	return nil
}
