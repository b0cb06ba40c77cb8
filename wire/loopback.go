package wire

import (
	"errors"
	"fmt"
	"net"
	"strings"
)

// ErrInsecureAddress: plain HTTP asked for an address that is not on a
// loopback address. Server and client both refuse it.
var ErrInsecureAddress = errors.New("plain HTTP serves only a loopback address; use 127.0.0.1 or ::1, or give TLS material")

// CheckLoopback returns ErrInsecureAddress unless addr's host is a loopback
// IP address or localhost.
func CheckLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%w: address %q: %v", ErrInsecureAddress, addr, err)
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%w (got %q)", ErrInsecureAddress, addr)
	}
	return nil
}

// Host header checks against DNS rebinding. A web page on another site can
// point its own name at 127.0.0.1 and then reach a loopback listener with
// the browser's same-origin rules on its side: the one thing such a request
// cannot hide is its Host header, which names the attacker's site. A
// listener a browser can reach on loopback therefore answers only requests
// whose Host is a loopback name or one configured for it.

// maxHostName bounds an allowed host name (RFC 1035's 253 characters).
const maxHostName = 253

// LoopbackHost reports whether host, the value of a Host header with or
// without a port, names the loopback interface: localhost (any case), any
// address of 127.0.0.0/8, or [::1]. A name that merely resolves to
// loopback (a rebinding name) is not one; neither is an empty host.
func LoopbackHost(host string) bool {
	name, ok := hostName(host)
	if !ok {
		return false
	}
	if strings.EqualFold(name, "localhost") {
		return true
	}
	ip := net.ParseIP(name)
	return ip != nil && ip.IsLoopback()
}

// HostAllowed reports whether host, the value of a Host header with or
// without a port, is a loopback name (LoopbackHost) or one of names, which
// are host names without a port as ValidateAllowedHost accepts them,
// compared case-insensitively.
func HostAllowed(host string, names []string) bool {
	if LoopbackHost(host) {
		return true
	}
	name, ok := hostName(host)
	if !ok {
		return false
	}
	for _, n := range names {
		if strings.EqualFold(strings.Trim(n, "[]"), name) {
			return true
		}
	}
	return false
}

// hostName returns the host part of a Host header value: without its port
// and, for an IPv6 literal, without its brackets. ok is false for an empty
// host, a malformed bracket or port, or a value with characters no host
// name has.
func hostName(host string) (string, bool) {
	if host == "" || len(host) > maxHostName+8 {
		return "", false
	}
	name := host
	if strings.HasPrefix(host, "[") {
		end := strings.IndexByte(host, ']')
		if end < 0 {
			return "", false
		}
		name, rest := host[1:end], host[end+1:]
		if rest != "" && !validPort(rest) {
			return "", false
		}
		if ip := net.ParseIP(name); ip == nil || ip.To4() != nil {
			return "", false
		}
		return name, true
	}
	if i := strings.LastIndexByte(host, ':'); i >= 0 {
		if !validPort(host[i:]) {
			return "", false
		}
		name = host[:i]
	}
	if ValidateAllowedHost(name) != nil {
		return "", false
	}
	return name, true
}

// validPort reports whether s is ":" followed by one to five digits.
func validPort(s string) bool {
	if len(s) < 2 || len(s) > 6 || s[0] != ':' {
		return false
	}
	for _, c := range s[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// ErrAllowedHost: a name given to a listener as one of its own (nspl serve
// --allowed-host) that is not a bare host name.
var ErrAllowedHost = errors.New("an allowed host is a DNS name or an IP address without scheme, port or path, such as nspl.example.com")

// ValidateAllowedHost returns ErrAllowedHost unless name is a host name a
// Host header can carry: a DNS name of letters, digits, '-' and '.' (at
// most 253 characters, labels of at most 63), an IPv4 address, or an IPv6
// address (bare or in brackets).
func ValidateAllowedHost(name string) error {
	if strings.HasPrefix(name, "[") && strings.HasSuffix(name, "]") {
		if ip := net.ParseIP(name[1 : len(name)-1]); ip != nil && ip.To4() == nil {
			return nil
		}
		return fmt.Errorf("%w (got %q)", ErrAllowedHost, name)
	}
	if ip := net.ParseIP(name); ip != nil {
		return nil
	}
	if name == "" || len(name) > maxHostName {
		return fmt.Errorf("%w (got %q)", ErrAllowedHost, name)
	}
	for _, label := range strings.Split(strings.TrimSuffix(name, "."), ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return fmt.Errorf("%w (got %q)", ErrAllowedHost, name)
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return fmt.Errorf("%w (got %q)", ErrAllowedHost, name)
			}
		}
	}
	return nil
}
