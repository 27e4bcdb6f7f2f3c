package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/emiago/sipgo"
	sipmsg "github.com/emiago/sipgo/sip"
	"github.com/pion/srtp/v3"
)

// ---------------------------------------------------------------- sender side

// phone is the sender's SIP user agent client on 127.0.0.1.
type phone struct {
	ua      *sipgo.UserAgent
	cli     *sipgo.Client
	dialogs *sipgo.DialogClientCache
	target  sipmsg.Uri
	conn    net.PacketConn
}

func newPhone(target string) (*phone, error) {
	ua, err := sipgo.NewUA(sipgo.WithUserAgent("sipbench"))
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
	p := &phone{ua: ua, cli: cli, conn: conn,
		dialogs: sipgo.NewDialogClientCache(cli, sipmsg.ContactHeader{Address: sipmsg.Uri{User: "bench", Host: "127.0.0.1", Port: port}})}
	srv.OnBye(func(req *sipmsg.Request, tx sipmsg.ServerTransaction) {
		if err := p.dialogs.ReadBye(req, tx); err != nil {
			tx.Respond(sipmsg.NewResponseFromRequest(req, 481, "No Dialog", nil))
		}
	})
	go srv.ServeUDP(conn)
	host, ps, _ := net.SplitHostPort(target)
	n, _ := strconv.Atoi(ps)
	p.target = sipmsg.Uri{Scheme: "sip", User: "transcribe", Host: host, Port: n}
	return p, nil
}

func (p *phone) close() {
	p.ua.Close()
	p.conn.Close()
}

// offerSDP offers PCMU on port: RTP/AVP, or with key (30 bytes) RTP/SAVP
// with its a=crypto (SDES, AES_CM_128_HMAC_SHA1_80).
func offerSDP(port int, key []byte) []byte {
	proto, crypto := "RTP/AVP", ""
	if key != nil {
		proto, crypto = "RTP/SAVP", "a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:"+base64.StdEncoding.EncodeToString(key)+"\r\n"
	}
	return fmt.Appendf(nil, "v=0\r\no=bench 1 1 IN IP4 127.0.0.1\r\ns=call\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"+
		"m=audio %d %s 0 101\r\na=rtpmap:0 PCMU/8000\r\na=rtpmap:101 telephone-event/8000\r\na=fmtp:101 0-16\r\na=ptime:20\r\na=sendonly\r\n%s", port, proto, crypto)
}

// answerPort is the m=audio port of an SDP answer.
func answerPort(body []byte) (int, error) {
	for _, l := range strings.Split(string(body), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "m=audio" {
			return strconv.Atoi(f[1])
		}
	}
	return 0, errors.New("answer has no m=audio line")
}

// call is one placed call with its RTP socket and the door's RTP address.
type call struct {
	dlg  *sipgo.DialogClientSession
	conn *net.UDPConn
	dest *net.UDPAddr
	srtp *srtp.Context // protects the call's RTP when it offered a key
}

// place sends an INVITE, waits for the final answer and ACKs it; it returns
// the time from sending the INVITE to the 200 OK. With secure the call
// offers SRTP (SDES) and its RTP is protected.
func (p *phone) place(ctx context.Context, secure bool) (*call, time.Duration, error) {
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, 0, err
	}
	c := &call{conn: conn}
	var key []byte
	if secure {
		key = make([]byte, 30)
		rand.Read(key)
		if c.srtp, err = srtp.CreateContext(key[:16], key[16:], srtp.ProtectionProfileAes128CmHmacSha1_80); err != nil {
			conn.Close()
			return nil, 0, err
		}
	}
	t0 := time.Now()
	c.dlg, err = p.dialogs.Invite(ctx, p.target, offerSDP(conn.LocalAddr().(*net.UDPAddr).Port, key), sipmsg.NewHeader("Content-Type", "application/sdp"))
	if err != nil {
		conn.Close()
		return nil, 0, fmt.Errorf("invite: %w", err)
	}
	if err := c.dlg.WaitAnswer(ctx, sipgo.AnswerOptions{}); err != nil {
		conn.Close()
		return nil, 0, fmt.Errorf("answer: %w", err)
	}
	lat := time.Since(t0)
	if err := c.dlg.Ack(ctx); err != nil {
		conn.Close()
		return nil, 0, fmt.Errorf("ack: %w", err)
	}
	port, err := answerPort(c.dlg.InviteResponse.Body())
	if err != nil {
		c.hangup(ctx)
		return nil, 0, err
	}
	c.dest = &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}
	return c, lat, nil
}

func (c *call) hangup(ctx context.Context) {
	if c.dlg != nil {
		c.dlg.Bye(ctx)
		c.dlg.Close()
	}
	c.conn.Close()
}
