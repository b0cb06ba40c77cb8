// Package testpki issues the certificate material tests need: a fresh
// development CA and node or client Material from it, in one call each,
// failing the test on any error.
//
// It is for tests only. Certificates are issued at the real wall clock,
// because TLS verifies them against it; nothing here is meant to be
// deterministic, and it must never be imported by production code.
package testpki

import (
	"testing"
	"time"

	"github.com/nspl-dev/nspl/pki"
)

// Authority is a CA that issues Material to a test.
type Authority struct {
	t  testing.TB
	CA *pki.CA
}

// New returns a fresh CA.
func New(t testing.TB) *Authority {
	t.Helper()
	ca, err := pki.NewCA(pki.Options{Now: time.Now()})
	if err != nil {
		t.Fatalf("testpki: new CA: %v", err)
	}
	return &Authority{t: t, CA: ca}
}

// Node returns the Material of node name, reachable at hosts (the pki
// defaults when none are given).
func (a *Authority) Node(name string, hosts ...string) *pki.Material {
	a.t.Helper()
	c, err := a.CA.IssueNode(name, hosts, pki.Options{Now: time.Now()})
	if err != nil {
		a.t.Fatalf("testpki: issue node %q: %v", name, err)
	}
	return a.material(c)
}

// Client returns the Material of client name.
func (a *Authority) Client(name string) *pki.Material {
	a.t.Helper()
	c, err := a.CA.IssueClient(name, pki.Options{Now: time.Now()})
	if err != nil {
		a.t.Fatalf("testpki: issue client %q: %v", name, err)
	}
	return a.material(c)
}

func (a *Authority) material(c *pki.Certificate) *pki.Material {
	a.t.Helper()
	m, err := pki.ParseMaterial(a.CA.CertPEM, c.CertPEM, c.KeyPEM)
	if err != nil {
		a.t.Fatalf("testpki: parse material: %v", err)
	}
	return m
}
