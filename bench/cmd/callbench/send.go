package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/emiago/sipgo"
	sipmsg "github.com/emiago/sipgo/sip"
)

// phone is the benchmark's SIP user agent client on 127.0.0.1: requests
// over TCP (a SIPREC INVITE's multipart body is larger than a UDP
// datagram may be), BYEs from the daemon taken on UDP.
type phone struct {
	ua      *sipgo.UserAgent
	dialogs *sipgo.DialogClientCache
	target  sipmsg.Uri
	conn    net.PacketConn
}

func newPhone(target string) (*phone, error) {
	ua, err := sipgo.NewUA(sipgo.WithUserAgent("callbench"))
	if err != nil {
		return nil, err
	}
	srv, err := sipgo.NewServer(ua)
	if err != nil {
		return nil, err
	}
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := conn.LocalAddr().(*net.UDPAddr).Port
	cli, err := sipgo.NewClient(ua, sipgo.WithClientHostname("127.0.0.1"), sipgo.WithClientPort(port))
	if err != nil {
		return nil, err
	}
	p := &phone{ua: ua, conn: conn,
		dialogs: sipgo.NewDialogClientCache(cli, sipmsg.ContactHeader{Address: sipmsg.Uri{User: "bench", Host: "127.0.0.1", Port: port}})}
	srv.OnBye(func(req *sipmsg.Request, tx sipmsg.ServerTransaction) {
		if err := p.dialogs.ReadBye(req, tx); err != nil {
			tx.Respond(sipmsg.NewResponseFromRequest(req, 481, "No Dialog", nil))
		}
	})
	go srv.ServeUDP(conn)
	host, ps, _ := net.SplitHostPort(target)
	n, _ := strconv.Atoi(ps)
	p.target = sipmsg.Uri{Scheme: "sip", User: "bench", Host: host, Port: n, UriParams: sipmsg.NewParams()}
	p.target.UriParams.Add("transport", "tcp")
	return p, nil
}

func (p *phone) close() {
	p.ua.Close()
	p.conn.Close()
}

// siprecMetadata is the recording metadata of every SIPREC call: two
// participants, each sending one labelled stream.
const siprecMetadata = `<?xml version="1.0" encoding="UTF-8"?>
<recording xmlns="urn:ietf:params:xml:ns:recording:1">
  <datamode>complete</datamode>
  <session session_id="sess-1"><sipSessionID>ab30317f1a784dc48ff824d0d3715d86;remote=47755a9de7794ba387653f2099600ef2</sipSessionID></session>
  <participant participant_id="p-a"><nameID aor="sip:a@pbx.example"><name>A</name></nameID></participant>
  <participant participant_id="p-b"><nameID aor="sip:b@pbx.example"><name>B</name></nameID></participant>
  <stream stream_id="s-1" session_id="sess-1"><label>1</label></stream>
  <stream stream_id="s-2" session_id="sess-1"><label>2</label></stream>
  <participantstreamassoc participant_id="p-a"><send>s-1</send><recv>s-2</recv></participantstreamassoc>
  <participantstreamassoc participant_id="p-b"><send>s-2</send><recv>s-1</recv></participantstreamassoc>
</recording>`

// offer is the SDP offer of one stream per port in codec k, labelled
// 1, 2... for SIPREC.
func offer(ports []int, k codec, siprec bool) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "v=0\r\no=bench 1 1 IN IP4 127.0.0.1\r\ns=call\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n")
	for i, port := range ports {
		fmt.Fprintf(&b, "m=audio %d RTP/AVP %d\r\n", port, k.pt)
		if k.pt == 9 {
			b.WriteString("a=rtpmap:9 G722/8000\r\n")
		} else {
			b.WriteString("a=rtpmap:0 PCMU/8000\r\n")
		}
		dir := "sendrecv"
		if siprec {
			dir = "sendonly"
		}
		b.WriteString("a=ptime:20\r\na=" + dir + "\r\n")
		if siprec {
			fmt.Fprintf(&b, "a=label:%d\r\n", i+1)
		}
	}
	return []byte(b.String())
}

// placed is a call set up: its dialog, one RTP socket per stream and the
// door's RTP address of each.
type placed struct {
	dlg    *sipgo.DialogClientSession
	conns  []*net.UDPConn
	dests  []*net.UDPAddr
	callID string
}

// place sets up a call of streams streams (SIPREC when siprec) in codec k.
func (p *phone) place(ctx context.Context, streams int, k codec, siprec bool) (*placed, error) {
	c := &placed{}
	var ports []int
	for range streams {
		conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			c.close()
			return nil, err
		}
		c.conns = append(c.conns, conn)
		ports = append(ports, conn.LocalAddr().(*net.UDPAddr).Port)
	}
	body := offer(ports, k, siprec)
	headers := []sipmsg.Header{sipmsg.NewHeader("Content-Type", "application/sdp")}
	if siprec {
		body = []byte("--b0undary\r\nContent-Type: application/sdp\r\n\r\n" + string(body) +
			"\r\n--b0undary\r\nContent-Type: application/rs-metadata+xml\r\nContent-Disposition: recording-session\r\n\r\n" + siprecMetadata + "\r\n--b0undary--\r\n")
		headers = []sipmsg.Header{sipmsg.NewHeader("Content-Type", "multipart/mixed;boundary=b0undary"), sipmsg.NewHeader("Require", "siprec")}
	}
	var err error
	if c.dlg, err = p.dialogs.Invite(ctx, p.target, body, headers...); err != nil {
		c.close()
		return nil, fmt.Errorf("invite: %w", err)
	}
	if err := c.dlg.WaitAnswer(ctx, sipgo.AnswerOptions{}); err != nil {
		c.close()
		return nil, fmt.Errorf("answer: %w", err)
	}
	if err := c.dlg.Ack(ctx); err != nil {
		c.close()
		return nil, fmt.Errorf("ack: %w", err)
	}
	c.callID = c.dlg.InviteRequest.CallID().Value()
	for _, l := range strings.Split(string(c.dlg.InviteResponse.Body()), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "m=audio" {
			port, _ := strconv.Atoi(f[1])
			c.dests = append(c.dests, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
		}
	}
	if len(c.dests) != streams {
		c.hangup(ctx)
		return nil, fmt.Errorf("answer has %d streams, %d offered", len(c.dests), streams)
	}
	return c, nil
}

func (c *placed) close() {
	for _, conn := range c.conns {
		conn.Close()
	}
}

func (c *placed) hangup(ctx context.Context) error {
	defer c.close()
	if c.dlg == nil {
		return errors.New("no dialog")
	}
	err := c.dlg.Bye(ctx)
	c.dlg.Close()
	return err
}

// losses is a Gilbert-Elliott loss pattern of n packets at rate (0-1),
// bursts of 3 packets on average: true where a packet is dropped.
func losses(n int, rate float64, seed uint64) []bool {
	out := make([]bool, n)
	if rate <= 0 {
		return out
	}
	const leave = 1.0 / 3 // P(bad -> good): mean burst 3 packets (60 ms)
	enter := rate * leave / (1 - rate)
	rng := rand.New(rand.NewPCG(seed, 7))
	bad := false
	for i := range out {
		if bad {
			bad = rng.Float64() >= leave
		} else {
			bad = rng.Float64() < enter
		}
		out[i] = bad
	}
	return out
}

// stream sends each stream's payload in 20 ms RTP packets at real time
// from t0, all streams of the call in step, leaving out the packets drop
// marks. It returns the packets dropped and sent.
func (c *placed) stream(t0 time.Time, k codec, payloads [][]byte, drop [][]bool) (dropped, sent int) {
	n := 0
	for _, p := range payloads {
		n = max(n, (len(p)+k.frame-1)/k.frame)
	}
	buf := make([]byte, 12+k.frame)
	for i := range n {
		time.Sleep(time.Until(t0.Add(time.Duration(i) * 20 * time.Millisecond)))
		for s, p := range payloads {
			if drop[s][i] {
				dropped++
				continue
			}
			buf[0], buf[1] = 0x80, k.pt
			if i == 0 {
				buf[1] |= 0x80 // marker: the talkspurt's start
			}
			binary.BigEndian.PutUint16(buf[2:], uint16(1000+i))
			binary.BigEndian.PutUint32(buf[4:], uint32(5000+160*i)) // G.722 too: an 8 kHz RTP clock
			binary.BigEndian.PutUint32(buf[8:], uint32(0xCA11<<8+s))
			lo, hi := min(i*k.frame, len(p)), min((i+1)*k.frame, len(p))
			m := copy(buf[12:], p[lo:hi])
			if m == 0 {
				continue
			}
			c.conns[s].WriteToUDP(buf[:12+m], c.dests[s])
			sent++
		}
	}
	return dropped, sent
}
