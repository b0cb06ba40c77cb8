package server

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/nspl-dev/nspl/wire"
)

// The Host check against DNS rebinding. A page on another site can make
// its own name resolve to 127.0.0.1 and so reach a loopback listener with
// the browser treating the listener as that site: same-origin to the
// page, cookies of that name, an Origin that matches the Host. The Host
// header is what gives it away. A listener answers a request only when its
// Host is a loopback name (wire.LoopbackHost) or a configured name
// (Config.AllowedHosts) whenever
//
//   - it serves plain HTTP (Insecure, which listens on loopback only), or
//   - it serves TLS on a loopback address.
//
// A TLS listener on loopback also answers the names its certificate
// carries (the peers and clients that dial the node by a name of its
// certificate keep working). A TLS listener on any other address answers
// every Host: a rebinding name cannot present the node's certificate, so
// no browser completes the handshake under it, and the node's real names
// need no list.

// hostRefusal is the body of a refused Host: what the request named and
// how to reach the listener instead.
func hostRefusal(host string) string {
	return fmt.Sprintf("this listener answers only to loopback names (localhost, 127.0.0.1, [::1]) and the names given to it with --allowed-host; "+
		"the request named %q: open it as http://127.0.0.1:PORT/, or start nspl serve with --allowed-host NAME for a name of your own that points here", host)
}

// guardHost answers 421 Misdirected Request to a request whose Host is not
// allowed, when check(r) says r must be checked.
func guardHost(h http.Handler, names []string, check func(r *http.Request) bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if check(r) && !wire.HostAllowed(r.Host, names) {
			http.Error(w, hostRefusal(r.Host), http.StatusMisdirectedRequest)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// GuardLoopbackHosts wraps a plain-HTTP listener's handler (the metrics
// listener's) with the Host check: a request that arrived over a loopback
// connection is answered only when its Host is a loopback name or one of
// names, so a wildcard-bound listener is checked on its loopback side too;
// one from another interface is answered as before. names must pass
// wire.ValidateAllowedHost.
func GuardLoopbackHosts(h http.Handler, names []string) http.Handler {
	return guardHost(h, names, func(r *http.Request) bool {
		a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		return ok && isLoopbackAddr(a.String())
	})
}

// ValidateAllowedHosts checks every name of an --allowed-host list.
func ValidateAllowedHosts(names []string) error {
	for _, n := range names {
		if err := wire.ValidateAllowedHost(n); err != nil {
			return err
		}
	}
	return nil
}

// certificateNames returns the DNS names and IP addresses of the first
// certificate tc presents, the names a TLS listener answers besides the
// configured ones.
func certificateNames(tc *tls.Config) []string {
	if tc == nil || len(tc.Certificates) == 0 || len(tc.Certificates[0].Certificate) == 0 {
		return nil
	}
	leaf := tc.Certificates[0].Leaf
	if leaf == nil {
		var err error
		if leaf, err = x509.ParseCertificate(tc.Certificates[0].Certificate[0]); err != nil {
			return nil
		}
	}
	names := make([]string, 0, len(leaf.DNSNames)+len(leaf.IPAddresses))
	for _, n := range leaf.DNSNames {
		if wire.ValidateAllowedHost(n) == nil {
			names = append(names, n)
		}
	}
	for _, ip := range leaf.IPAddresses {
		names = append(names, ip.String())
	}
	return names
}

// isLoopbackAddr reports whether a listener or connection address is on
// loopback.
func isLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
