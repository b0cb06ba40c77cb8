package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/pki"
)

// certUsage is what nspl cert --help prints.
const certUsage = `nspl cert - make certificates for a development cluster

Usage:
  nspl cert ca [--dir DIR]                      create the cluster CA (ca.crt, ca.key)
  nspl cert node NAME [--dir DIR] [--host H]... a node certificate (node-NAME.crt/.key)
  nspl cert client NAME [--dir DIR]             a client certificate (client-NAME.crt/.key)

Flags:
  --dir DIR        where the files go and where the CA is read from (default certs)
  --host H         a host name or IP address the node is reached at (repeatable;
                   default localhost, 127.0.0.1 and ::1)
  --validity D     how long the certificate is valid (default 17520h; CA 87600h)

Keys are written 0600 and never overwritten. A node certificate names the
node as DNS SAN NAME and URI SAN nspl-node://NAME; peers take a node's name
from it. Give nspl serve --pki DIR --node NAME.
`

// hostList collects repeated --host flags.
type hostList []string

func (h *hostList) String() string { return strings.Join(*h, ",") }
func (h *hostList) Set(v string) error {
	*h = append(*h, v)
	return nil
}

// runCert runs nspl cert with args (after "cert").
func (m *Main) runCert(_ context.Context, args []string) error {
	fs := flag.NewFlagSet("nspl cert", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dir := fs.String("dir", "certs", "write the files into `DIR`")
	validity := fs.Duration("validity", 0, "certificate validity")
	var hosts hostList
	fs.Var(&hosts, "host", "a host name or IP address of the node (repeatable)")
	if len(args) == 0 {
		return usageErrorf("cert: say what to make: ca, node NAME or client NAME")
	}
	kind, rest := args[0], args[1:]
	if isHelpArg(kind) || ((kind == "node" || kind == "client") && len(rest) > 0 && isHelpArg(rest[0])) {
		return m.writeText(certUsage)
	}
	switch kind {
	case "ca", "node", "client":
	default:
		return usageErrorf("cert: unknown kind %q; make ca, node NAME or client NAME", kind)
	}
	var name string
	if kind == "node" || kind == "client" {
		if len(rest) == 0 || strings.HasPrefix(rest[0], "-") {
			return usageErrorf("cert %s: give the %s's name, as in nspl cert %s n1", kind, kind, kind)
		}
		name, rest = rest[0], rest[1:]
	}
	if err := fs.Parse(rest); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return m.writeText(certUsage)
		}
		return flagParseError(fs, "cert "+kind, err)
	}
	if extra := fs.Args(); len(extra) > 0 {
		return usageErrorf("cert %s: unexpected argument %q", kind, extra[0])
	}
	if *validity < 0 {
		return usageErrorf("cert %s: negative --validity %s", kind, *validity)
	}
	if len(hosts) > 0 && kind != "node" {
		return usageErrorf("cert %s: --host applies to node certificates only", kind)
	}
	src := m.TimeSource
	if src == nil {
		src = timesource.System()
	}
	opts := pki.Options{Now: time.Unix(0, src.Now()).UTC(), Validity: *validity}

	if kind == "ca" {
		ca, err := pki.NewCA(opts)
		if err != nil {
			return certError(err)
		}
		if err := pki.WriteCA(*dir, ca); err != nil {
			return certError(err)
		}
		return m.created(pki.CACertPath(*dir), pki.CAKeyPath(*dir))
	}
	if err := pki.ValidName(name); err != nil {
		return usageErrorf("cert %s: %v", kind, err)
	}
	ca, err := pki.LoadCA(*dir)
	if err != nil {
		return certError(fmt.Errorf("%w (create the CA first: nspl cert ca --dir %s)", err, *dir))
	}
	if kind == "node" {
		c, err := ca.IssueNode(name, hosts, opts)
		if err != nil {
			return certError(err)
		}
		if err := pki.WriteCertificate(pki.NodeCertPath(*dir, name), pki.NodeKeyPath(*dir, name), c); err != nil {
			return certError(err)
		}
		return m.created(pki.NodeCertPath(*dir, name), pki.NodeKeyPath(*dir, name))
	}
	c, err := ca.IssueClient(name, opts)
	if err != nil {
		return certError(err)
	}
	if err := pki.WriteCertificate(pki.ClientCertPath(*dir, name), pki.ClientKeyPath(*dir, name), c); err != nil {
		return certError(err)
	}
	return m.created(pki.ClientCertPath(*dir, name), pki.ClientKeyPath(*dir, name))
}

// certError classifies a pki failure: a bad host is the command line's
// fault, anything else is the files'.
func certError(err error) error {
	if errors.Is(err, pki.ErrInvalidHost) || errors.Is(err, pki.ErrInvalidName) {
		return &RunError{Kind: ErrUsage, Err: err}
	}
	return ioError(err)
}

func (m *Main) created(cert, key string) error {
	if _, err := fmt.Fprintf(m.Stdout, "created %s and %s\n", cert, key); err != nil {
		return ioError(err)
	}
	return nil
}

// isHelpArg reports whether arg asks for help.
func isHelpArg(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help" || arg == "help"
}
