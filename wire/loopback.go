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
