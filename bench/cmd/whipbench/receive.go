package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/pion/rtp"

	"github.com/earshot-dev/earshot/ingest"
	"github.com/earshot-dev/earshot/ingest/webrtc"
)

// ---- receive path CPU ----

// msg is one line between the door process and the sender.
type msg struct {
	Kind  string  `json:"kind"` // offer, answer, ports, streaming, done
	Index int     `json:"index,omitempty"`
	SDP   string  `json:"sdp,omitempty"`
	Ports []int   `json:"ports,omitempty"`
	Sent  int64   `json:"sent,omitempty"` // bytes of payload sent per session (done)
	CPU   float64 `json:"cpu,omitempty"`  // sender's CPU seconds while streaming (done)
}

type recvResult struct {
	cpu, senderCPU float64 // cores
	received       float64 // fraction of the sent audio counted by the sink
	goroutines     int
	offerMS        []float64
}

// receive runs one row: a sender process with n streams in mode (webrtc or
// udp), the door process's CPU measured between its streaming and done
// lines.
func receive(mode string, n int, dur time.Duration, speech string) (*recvResult, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "-sender", "-mode", mode, "-n", strconv.Itoa(n), "-duration", dur.String(), "-speech", speech)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	enc, dec := json.NewEncoder(in), json.NewDecoder(bufio.NewReader(out))

	att := &attacher{}
	r := &recvResult{}
	var door *webrtc.Door
	var conns []*net.UDPConn
	var readers sync.WaitGroup
	defer func() {
		for _, c := range conns {
			c.Close()
		}
		readers.Wait()
	}()
	if mode == "webrtc" {
		if door, att, err = newDoor(); err != nil {
			return nil, err
		}
		defer door.Close()
	} else {
		var ports []int
		for i := range n {
			c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
			if err != nil {
				return nil, err
			}
			conns = append(conns, c)
			ports = append(ports, c.LocalAddr().(*net.UDPAddr).Port)
			s, _ := att.AttachAudio(context.Background(), fmt.Sprintf("udp%d.x", i), "")
			readers.Go(func() { readUDP(c, s) })
		}
		if err := enc.Encode(msg{Kind: "ports", Ports: ports}); err != nil {
			return nil, err
		}
	}
	var cpu0 float64
	var t0 time.Time
	var bytes0 int64
	for {
		var m msg
		if err := dec.Decode(&m); err != nil {
			return nil, fmt.Errorf("sender: %w", err)
		}
		switch m.Kind {
		case "offer":
			id := fmt.Sprintf("s%d", m.Index)
			start := time.Now()
			ans, _, err := door.Offer(context.Background(), id, id+".x", "", []byte(m.SDP))
			if err != nil {
				return nil, err
			}
			r.offerMS = append(r.offerMS, float64(time.Since(start).Microseconds())/1000)
			if err := enc.Encode(msg{Kind: "answer", Index: m.Index, SDP: string(ans)}); err != nil {
				return nil, err
			}
		case "streaming":
			cpu0, t0, bytes0 = selfCPU(), time.Now(), att.bytes.Load()
			r.goroutines = runtime.NumGoroutine()
			if err := enc.Encode(msg{Kind: "go"}); err != nil {
				return nil, err
			}
		case "done":
			wall := time.Since(t0).Seconds()
			r.cpu = (selfCPU() - cpu0) / wall
			r.senderCPU = m.CPU / wall
			got := att.bytes.Load() - bytes0
			r.received = float64(got) / float64(m.Sent*int64(n))
			enc.Encode(msg{Kind: "bye"})
			slices.Sort(r.offerMS)
			return r, nil
		}
	}
}

func readUDP(c *net.UDPConn, s ingest.Session) {
	buf := make([]byte, 1500)
	var pkt rtp.Packet
	for {
		n, err := c.Read(buf)
		if err != nil {
			return
		}
		if pkt.Unmarshal(buf[:n]) != nil || len(pkt.Payload) == 0 {
			continue
		}
		s.Write(context.Background(), pkt.Payload)
	}
}
