package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"

	"github.com/kardianos/service"

	"github.com/earshot-dev/earshot/packaging"
	"github.com/earshot-dev/earshot/systemd"
)

const serviceUsage = `usage:
  earshotd service install   [--root DIR] [--exec PATH]  install and enable ` + systemd.UnitName + `
                                                          (and ` + systemd.DefaultConfig + ` if missing)
  earshotd service uninstall [--root DIR]                 disable and remove the unit (the config stays)
  earshotd service start|stop|status

--root DIR installs into the file tree DIR (an image being built, a test)
instead of the running system: the unit, its enablement symlink and the
default config are written there and no service manager is contacted.
--exec is the binary ExecStart runs: by default this binary, or
` + systemd.DefaultExec + ` with --root.
`

// serviceDescription is the unit's description as kardianos/service sees it.
const serviceDescription = "earshot speech-to-text appliance"

func cmdService(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, serviceUsage)
		return errors.New("service: missing subcommand")
	}
	action := args[0]
	fs := flag.NewFlagSet("service "+action, flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("root", "", "install into this file tree instead of the running system")
	exe := fs.String("exec", "", "binary ExecStart runs (install)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("service %s: unexpected argument %q", action, fs.Arg(0))
	}
	switch action {
	case "install", "uninstall", "start", "stop", "status":
	default:
		fmt.Fprint(stderr, serviceUsage)
		return fmt.Errorf("service: unknown subcommand %q", action)
	}
	if *root != "" {
		return serviceInRoot(action, *root, *exe, stdout)
	}
	if *exe == "" {
		p, err := os.Executable()
		if err != nil {
			return fmt.Errorf("service: %w", err)
		}
		if *exe, err = filepath.EvalSymlinks(p); err != nil {
			return fmt.Errorf("service: %w", err)
		}
	}
	return serviceOnSystem(action, *exe, stdout, stderr)
}

// serviceOnSystem carries out action on the running system through
// kardianos/service, which writes /etc/systemd/system/earshotd.service from
// the SystemdScript option (systemd.UnitFor: no template markup, so it is
// written as is) and runs systemctl.
func serviceOnSystem(action, exe string, stdout, stderr io.Writer) error {
	unit, err := systemd.UnitFor(exe)
	if err != nil {
		return fmt.Errorf("service: %w", err)
	}
	svc, err := service.New(&program{}, &service.Config{
		Name:        systemd.Name,
		DisplayName: systemd.Name,
		Description: serviceDescription,
		Executable:  exe,
		Option:      service.KeyValue{"SystemdScript": unit},
	})
	if err != nil {
		return fmt.Errorf("service: %w", err)
	}
	if p := svc.Platform(); p != "linux-systemd" {
		return fmt.Errorf("service: service manager is %q, not systemd: install the .deb or copy %s by hand", p, systemd.UnitName)
	}
	switch action {
	case "install":
		if err := writeDefaultConfig("/"); err != nil {
			return err
		}
		if _, err := user.Lookup("earshot"); err != nil {
			fmt.Fprintln(stderr, "warning: no user earshot; create it: adduser --system --group --home /var/lib/earshot --no-create-home earshot")
		}
		err = svc.Install()
	case "uninstall":
		err = svc.Uninstall()
	case "start":
		err = svc.Start()
	case "stop":
		err = svc.Stop()
	case "status":
		var st service.Status
		st, err = svc.Status()
		if errors.Is(err, service.ErrNotInstalled) {
			fmt.Fprintln(stdout, "not installed")
			return nil
		}
		if err == nil {
			fmt.Fprintln(stdout, map[service.Status]string{
				service.StatusRunning: "running", service.StatusStopped: "stopped",
			}[st])
		}
	}
	if err != nil {
		return fmt.Errorf("service %s: %w", action, err)
	}
	return nil
}

// Paths inside a root, as systemctl enable lays them out for
// WantedBy=multi-user.target.
var (
	unitDir  = filepath.Join("etc", "systemd", "system")
	wantsDir = filepath.Join(unitDir, "multi-user.target.wants")
)

// serviceInRoot carries out action on the file tree root without a
// service manager: install writes the unit (ExecStart exe, default
// systemd.DefaultExec), the symlink `systemctl enable` would make and the
// default config when there is none; uninstall removes the unit and the
// symlink; status reports "not installed", "installed, disabled" or
// "installed, enabled".
func serviceInRoot(action, root, exe string, stdout io.Writer) error {
	unitPath := filepath.Join(root, unitDir, systemd.UnitName)
	link := filepath.Join(root, wantsDir, systemd.UnitName)
	target := "/" + filepath.ToSlash(filepath.Join(unitDir, systemd.UnitName))
	switch action {
	case "install":
		if exe == "" {
			exe = systemd.DefaultExec
		}
		unit, err := systemd.UnitFor(exe)
		if err != nil {
			return fmt.Errorf("service install: %w", err)
		}
		if _, err := os.Lstat(unitPath); err == nil {
			return fmt.Errorf("service install: %s already exists", unitPath)
		}
		if err := os.MkdirAll(filepath.Join(root, wantsDir), 0o755); err != nil {
			return fmt.Errorf("service install: %w", err)
		}
		if err := os.WriteFile(unitPath, []byte(unit), 0o644); err != nil {
			return fmt.Errorf("service install: %w", err)
		}
		if err := os.Symlink(target, link); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("service install: enable: %w", err)
		}
		if err := writeDefaultConfig(root); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "installed", unitPath)
	case "uninstall":
		if err := os.Remove(link); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("service uninstall: %w", err)
		}
		if err := os.Remove(unitPath); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("service uninstall: %s: %w", unitPath, service.ErrNotInstalled)
			}
			return fmt.Errorf("service uninstall: %w", err)
		}
	case "status":
		_, uerr := os.Stat(unitPath)
		_, lerr := os.Lstat(link)
		switch {
		case uerr != nil:
			fmt.Fprintln(stdout, "not installed")
		case lerr != nil:
			fmt.Fprintln(stdout, "installed, disabled")
		default:
			fmt.Fprintln(stdout, "installed, enabled")
		}
	default:
		return fmt.Errorf("service %s: needs the running service manager, not --root", action)
	}
	return nil
}

// writeDefaultConfig writes the packaged default config to
// root/etc/earshot/earshot.yaml (0644) unless a file is there already.
func writeDefaultConfig(root string) error {
	path := filepath.Join(root, systemd.DefaultConfig)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("service install: config: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("service install: config: %w", err)
	}
	_, err = f.Write(packaging.DefaultConfig())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("service install: config: %w", err)
	}
	return nil
}

// program adapts `earshotd run` to kardianos/service: Start runs it with a
// context of its own, Stop cancels that context and waits for it to return
// (the graceful stop). It does nothing else.
type program struct {
	parent context.Context
	run    func(ctx context.Context) error

	cancel context.CancelFunc
	done   chan struct{} // closed when run has returned
	err    error         // run's result, set before done is closed
}

// Start starts run; kardianos calls it once.
func (p *program) Start(service.Service) error {
	if p.run == nil {
		return errors.New("service: nothing to run")
	}
	ctx, cancel := context.WithCancel(p.parent)
	p.cancel = cancel
	p.done = make(chan struct{})
	go func() { // waited for by Stop
		defer close(p.done)
		p.err = p.run(ctx)
	}()
	return nil
}

// Stop cancels run's context and waits for it to return.
func (p *program) Stop(service.Service) error {
	if p.cancel == nil {
		return nil
	}
	p.cancel()
	<-p.done
	return nil
}

// runManaged runs `earshotd run` directly when started from a terminal or
// a container, and as a kardianos/service program when a service manager
// started it. Either way SIGTERM or SIGINT (which cancel ctx, see main)
// stop it gracefully.
func runManaged(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	run := func(ctx context.Context) error { return cmdRun(ctx, args, stdout, stderr) }
	if service.Interactive() {
		return run(ctx)
	}
	return serveManaged(ctx, run)
}

// serveManaged runs run under kardianos/service until ctx ends or run
// returns by itself (a failure, which the service manager then sees as
// the exit status), and returns run's result.
func serveManaged(ctx context.Context, run func(context.Context) error) error {
	p := &program{parent: ctx, run: run}
	svc, err := service.New(p, &service.Config{
		Name: systemd.Name,
		Option: service.KeyValue{
			// Wait for main's signal context or for run to end on its own.
			"RunWait": func() {
				select {
				case <-ctx.Done():
				case <-p.done:
				}
			},
		},
	})
	if errors.Is(err, service.ErrNoServiceSystemDetected) {
		return run(ctx)
	}
	if err != nil {
		return fmt.Errorf("service: %w", err)
	}
	if err := svc.Run(); err != nil {
		return fmt.Errorf("service: %w", err)
	}
	return p.err
}
