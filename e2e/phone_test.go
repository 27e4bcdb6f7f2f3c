package e2e

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/emiago/sipgo"
	sipmsg "github.com/emiago/sipgo/sip"
)

// phone is a SIP user agent client placing calls from 127.0.0.1.
type phone struct {
	t       *testing.T
	target  string
	dialogs *sipgo.DialogClientCache
	cli     *sipgo.Client
	byes    chan string // Call-IDs of BYEs received from the daemon
	tcp     bool        // send requests over TCP (large SIPREC bodies)
	byeGate chan struct{}
}

func newPhone(t *testing.T, target string) *phone {
	t.Helper()
	return newGatedPhone(t, target, nil)
}

// newGatedPhone is newPhone whose answer to a BYE from the daemon waits
// until gate is closed (the BYE's Call-ID is on byes at once); nil answers
// at once.
func newGatedPhone(t *testing.T, target string, gate chan struct{}) *phone {
	t.Helper()
	ua, err := sipgo.NewUA(sipgo.WithUserAgent("e2e-phone"))
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := sipgo.NewServer(ua)
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := conn.LocalAddr().(*net.UDPAddr).Port
	cli, _ := sipgo.NewClient(ua, sipgo.WithClientHostname("127.0.0.1"), sipgo.WithClientPort(port))
	p := &phone{t: t, target: target, cli: cli, byes: make(chan string, 8), byeGate: gate,
		dialogs: sipgo.NewDialogClientCache(cli, sipmsg.ContactHeader{Address: sipmsg.Uri{User: "phone", Host: "127.0.0.1", Port: port}})}
	srv.OnBye(func(req *sipmsg.Request, tx sipmsg.ServerTransaction) {
		if p.byeGate != nil {
			p.byes <- req.CallID().Value()
			<-p.byeGate
		}
		if err := p.dialogs.ReadBye(req, tx); err != nil {
			tx.Respond(sipmsg.NewResponseFromRequest(req, 481, "No Dialog", nil))
		}
		if p.byeGate == nil {
			p.byes <- req.CallID().Value()
		}
	})
	done := make(chan struct{})
	go func() { srv.ServeUDP(conn); close(done) }()
	t.Cleanup(func() { ua.Close(); conn.Close(); <-done })
	return p
}

func (p *phone) uri(user string) sipmsg.Uri {
	host, port, _ := net.SplitHostPort(p.target)
	var n int
	fmt.Sscan(port, &n)
	u := sipmsg.Uri{Scheme: "sip", User: user, Host: host, Port: n}
	if p.tcp {
		u.UriParams = sipmsg.NewParams()
		u.UriParams.Add("transport", "tcp")
	}
	return u
}

// call sends an INVITE and waits for the final answer; a non-2xx answer
// returns its status.
func (p *phone) call(ctx context.Context, user, ctype string, body []byte, headers ...sipmsg.Header) (*sipgo.DialogClientSession, int) {
	p.t.Helper()
	headers = append(headers, sipmsg.NewHeader("Content-Type", ctype))
	dlg, err := p.dialogs.Invite(ctx, p.uri(user), body, headers...)
	if err != nil {
		p.t.Fatalf("invite: %v", err)
	}
	if err := dlg.WaitAnswer(ctx, sipgo.AnswerOptions{}); err != nil {
		if de, ok := err.(*sipgo.ErrDialogResponse); ok {
			return dlg, de.Res.StatusCode
		}
		if de, ok := err.(sipgo.ErrDialogResponse); ok {
			return dlg, de.Res.StatusCode
		}
		p.t.Fatalf("wait answer: %v", err)
	}
	if err := dlg.Ack(ctx); err != nil {
		p.t.Fatalf("ack: %v", err)
	}
	return dlg, dlg.InviteResponse.StatusCode
}

// refusal sends an INVITE and returns the final non-2xx response; a call
// answered 2xx fails the test.
func (p *phone) refusal(ctx context.Context, user string, body []byte) *sipmsg.Response {
	p.t.Helper()
	dlg, err := p.dialogs.Invite(ctx, p.uri(user), body, sipmsg.NewHeader("Content-Type", "application/sdp"))
	if err != nil {
		p.t.Fatalf("invite: %v", err)
	}
	err = dlg.WaitAnswer(ctx, sipgo.AnswerOptions{})
	var pe *sipgo.ErrDialogResponse
	if errors.As(err, &pe) {
		return pe.Res
	}
	var ve sipgo.ErrDialogResponse
	if errors.As(err, &ve) {
		return ve.Res
	}
	p.t.Fatalf("INVITE: %v (answered %d), want a refusal", err, dlg.InviteResponse.StatusCode)
	return nil
}
