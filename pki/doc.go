// Package pki makes and loads the certificate material of an nspl cluster:
// a development certificate authority, node certificates, client
// certificates, and the tls.Config values built from them.
//
// Every certificate is ECDSA P-256 and signed by the cluster CA. A node
// certificate names its node twice, as a DNS SAN "<name>" and as a URI SAN
// "nspl-node://<name>", and carries the host names and IP addresses it is
// reached at; a client certificate carries only the URI SAN
// "nspl-client://<name>". The URI SAN is the identity: PeerName and
// PeerIdentity read it from the verified chain, never from a request body,
// and the configs built here check it in tls.Config.VerifyConnection, which
// Go also runs on resumed sessions, so a resumed session cannot skip the
// check.
//
// Files in a directory (see the *Path functions): ca.crt and ca.key, then
// node-<name>.crt/.key and client-<name>.crt/.key. Keys are written 0600 and
// never overwritten.
//
// Using it:
//
//	ca, err := pki.NewCA(pki.Options{Now: now})
//	err = pki.WriteCA(dir, ca)
//	node, err := ca.IssueNode("n1", []string{"127.0.0.1"}, pki.Options{Now: now})
//	err = pki.WriteCertificate(pki.NodeCertPath(dir, "n1"), pki.NodeKeyPath(dir, "n1"), node)
//	m, err := pki.LoadNode(dir, "n1")
//	srv := &http.Server{TLSConfig: m.ServerConfig(pki.ServerOptions{})}
//	tr := m.Transport()              // HTTP/2-only net/http transport to peers
//	name, err := pki.PeerName(*r.TLS) // the node that sent request r
//
// It also states the module's one HTTP/2 client policy (transport.go):
// every HTTP client nspl builds, the peers' Transport here and the remote
// client's, is net/http's Transport with its Protocols set by HTTP2Only,
// HTTP/2 over TLS or, for a loopback http:// URL, unencrypted HTTP/2 with
// prior knowledge, and never HTTP/1.
//
// This package never reads the wall clock: issuing takes the time in
// Options. It is meant for development and test clusters; an operator with
// their own CA can hand nspl files with the same SANs.
package pki
