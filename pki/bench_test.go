package pki

import (
	"crypto/tls"
	"crypto/x509"
	"testing"
)

func BenchmarkPeerName(b *testing.B) {
	ca := testCA(b)
	m := nodeMaterial(b, ca, "n1")
	cs := tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{m.Certificate.Leaf, ca.Cert}}}
	for b.Loop() {
		if _, err := PeerName(cs); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkIssueNode(b *testing.B) {
	ca := testCA(b)
	for b.Loop() {
		if _, err := ca.IssueNode("n1", nil, Options{Now: issueTime}); err != nil {
			b.Fatal(err)
		}
	}
}
