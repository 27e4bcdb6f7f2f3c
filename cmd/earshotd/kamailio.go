package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/earshot-dev/earshot/packaging/kamailio"
)

const kamailioUsage = `usage:
  earshotd kamailio config [--listen ADDR] [--dispatcher-list FILE] [--ctl SOCKET]
                           [--ping-interval 10s] [--timeout 2s]
                           [--tls-listen ADDR --tls-cert FILE --tls-key FILE --tls-ca FILE]
      print kamailio.cfg (the one shipped in /usr/share/earshot/kamailio) with these settings;
      the --tls-* flags, all four together, add SIP over TLS to the callers and to the nodes
  earshotd kamailio dispatcher NODE...
      print the dispatcher list of the nodes' SIP doors; NODE is host[:port]
      or sip:host[:port][;transport=tcp|tls], port 5060 when left out (5061 with tls)
`

// cmdKamailio prints the Kamailio configuration that spreads SIP calls
// over a cluster's nodes (package packaging/kamailio).
func cmdKamailio(_ context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, kamailioUsage)
		return fmt.Errorf("kamailio: missing config or dispatcher")
	}
	switch args[0] {
	case "config":
		fs := flag.NewFlagSet("kamailio config", flag.ContinueOnError)
		fs.SetOutput(stderr)
		var c kamailio.Config
		c.SetDefaults()
		fs.StringVar(&c.Listen, "listen", c.Listen, "address Kamailio takes calls on, UDP and TCP")
		fs.StringVar(&c.DispatcherList, "dispatcher-list", c.DispatcherList, "node list file Kamailio reads")
		fs.StringVar(&c.Ctl, "ctl", c.Ctl, "control socket for kamcmd")
		fs.DurationVar(&c.PingInterval, "ping-interval", c.PingInterval, "OPTIONS probe interval per node (whole seconds)")
		fs.DurationVar(&c.Timeout, "timeout", c.Timeout, "silence after which a node is skipped (and a probe fails)")
		fs.StringVar(&c.TLSListen, "tls-listen", "", "address Kamailio takes SIP over TLS on (turns TLS on)")
		fs.StringVar(&c.TLSCert, "tls-cert", "", "Kamailio's certificate, PEM (absolute path)")
		fs.StringVar(&c.TLSKey, "tls-key", "", "its private key, PEM (absolute path)")
		fs.StringVar(&c.TLSCA, "tls-ca", "", "CAs the nodes' certificates chain to, PEM (absolute path)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if fs.NArg() != 0 {
			return fmt.Errorf("kamailio config: unexpected argument %q", fs.Arg(0))
		}
		cfg, err := kamailio.Render(c)
		if err != nil {
			return fmt.Errorf("kamailio config: %w", err)
		}
		_, err = stdout.Write(cfg)
		return err
	case "dispatcher":
		list, err := kamailio.DispatcherList(args[1:])
		if err != nil {
			fmt.Fprint(stderr, kamailioUsage)
			return err
		}
		_, err = stdout.Write(list)
		return err
	case "help", "-h", "--help":
		fmt.Fprint(stdout, kamailioUsage)
		return nil
	}
	fmt.Fprint(stderr, kamailioUsage)
	return fmt.Errorf("kamailio: unknown command %q", args[0])
}
