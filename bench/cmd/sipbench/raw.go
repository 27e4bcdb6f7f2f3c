package main

import (
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// raw is the reference receive loop: sockets read by one goroutine each,
// counting RTP payload bytes, nothing else.
type raw struct {
	conns []*net.UDPConn
	bytes atomic.Int64
	wg    sync.WaitGroup
}

func rawReaders(n int) (*raw, error) {
	r := &raw{}
	for range n {
		c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			r.close()
			return nil, err
		}
		r.conns = append(r.conns, c)
		r.wg.Go(func() {
			buf := make([]byte, 1500)
			for {
				n, _, err := c.ReadFromUDPAddrPort(buf)
				if err != nil {
					return
				}
				if n > 12 {
					r.bytes.Add(int64(n - 12))
				}
			}
		})
	}
	return r, nil
}

func (r *raw) count() (int64, int64) { b := r.bytes.Load(); return b, b }

func (r *raw) ports() string {
	var ps []string
	for _, c := range r.conns {
		ps = append(ps, strconv.Itoa(c.LocalAddr().(*net.UDPAddr).Port))
	}
	return strings.Join(ps, ",")
}

func (r *raw) close() {
	for _, c := range r.conns {
		c.Close()
	}
	r.wg.Wait()
}
