package pki

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// URI schemes of the identities in certificate URI SANs.
const (
	NodeScheme   = "nspl-node"
	ClientScheme = "nspl-client"
)

// Role is the kind of identity a certificate carries.
type Role int

// Roles.
const (
	// RoleNode is a cluster node (URI SAN nspl-node://<name>).
	RoleNode Role = iota + 1
	// RoleClient is an operator or program using the session API
	// (URI SAN nspl-client://<name>).
	RoleClient
)

// String returns "node" or "client".
func (r Role) String() string {
	switch r {
	case RoleNode:
		return "node"
	case RoleClient:
		return "client"
	}
	return fmt.Sprintf("role(%d)", int(r))
}

func (r Role) scheme() string {
	if r == RoleClient {
		return ClientScheme
	}
	return NodeScheme
}

// Identity is the verified identity a peer certificate carries.
type Identity struct {
	Role Role
	Name string
}

// String renders the identity as its URI SAN.
func (id Identity) String() string { return id.Role.scheme() + "://" + id.Name }

// ValidName reports whether name can be a node or client identity: a DNS
// label of 1–63 ASCII letters, digits and '-', not starting or ending with
// '-'. The error wraps ErrInvalidName.
func ValidName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: a name cannot be empty", ErrInvalidName)
	}
	if len(name) > 63 {
		return fmt.Errorf("%w: %q is longer than 63 bytes; choose a shorter name", ErrInvalidName, name)
	}
	if name[0] == '-' || name[len(name)-1] == '-' {
		return fmt.Errorf("%w: %q cannot start or end with '-'", ErrInvalidName, name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' {
			continue
		}
		return fmt.Errorf("%w: %q contains %q; use ASCII letters, digits and '-'", ErrInvalidName, name, string(rune(c)))
	}
	return nil
}

// validHost checks one host of a node certificate: an IP address or a DNS
// name of labels joined by '.' (a leading "*." wildcard is refused).
func validHost(h string) error {
	if net.ParseIP(h) != nil {
		return nil
	}
	if h == "" || len(h) > 253 {
		return fmt.Errorf("%w: %q is not an IP address or a DNS name of at most 253 bytes", ErrInvalidHost, h)
	}
	for _, label := range strings.Split(h, ".") {
		if err := ValidName(label); err != nil {
			return fmt.Errorf("%w: %q is not an IP address or a DNS name (label %q)", ErrInvalidHost, h, label)
		}
	}
	return nil
}

// identityURI returns the URI SAN of an identity.
func identityURI(role Role, name string) *url.URL {
	return &url.URL{Scheme: role.scheme(), Host: name}
}

// identityFromURIs returns the one identity of role among uris.
func identityFromURIs(uris []*url.URL, role Role) (string, bool) {
	for _, u := range uris {
		if u == nil || u.Scheme != role.scheme() || u.Host == "" {
			continue
		}
		if u.Path != "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
			continue
		}
		if ValidName(u.Host) != nil {
			continue
		}
		return u.Host, true
	}
	return "", false
}
