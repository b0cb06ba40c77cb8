package wire

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHostAllowed: a loopback listener answers loopback Host values, with
// or without a port, and the names configured for it; every other value,
// a rebinding name that resolves to 127.0.0.1 included, is refused.
func TestHostAllowed(t *testing.T) {
	names := []string{"nspl.example.com", "10.0.0.5", "[fd00::1]"}
	for _, tc := range []struct {
		host string
		want bool
	}{
		{"localhost", true},
		{"LocalHost:8001", true},
		{"127.0.0.1", true},
		{"127.0.0.1:8001", true},
		{"127.255.255.254:1", true},
		{"[::1]", true},
		{"[::1]:8001", true},
		{"nspl.example.com", true},
		{"NSPL.example.com:443", true},
		{"10.0.0.5:8001", true},
		{"[fd00::1]:8001", true},
		{"", false},
		{"evil.example", false},
		{"evil.example:8001", false},
		{"localhost.evil.example", false},
		{"128.0.0.1", false},
		{"126.255.255.255", false},
		{"10.0.0.6", false},
		{"example.com", false},
		{"::1", false},
		{"[::1", false},
		{"[::1]x", false},
		{"[127.0.0.1]", false},
		{"127.0.0.1:", false},
		{"127.0.0.1:123456", false},
		{"127.0.0.1:80a", false},
		{"local host", false},
		{"localhost/x", false},
		{"localhost@evil.example", false},
		{strings.Repeat("a", 300), false},
	} {
		t.Run(tc.host, func(t *testing.T) {
			require.Equal(t, tc.want, HostAllowed(tc.host, names))
		})
	}
	require.False(t, HostAllowed("nspl.example.com", nil), "a name is allowed only when configured")
}

// TestValidateAllowedHost: a configured name is a bare host name.
func TestValidateAllowedHost(t *testing.T) {
	label63 := strings.Repeat("a", 63)
	name253 := strings.Repeat(label63+".", 3) + strings.Repeat("b", 61) // 3×64 + 61 = 253
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"nspl.example.com", true},
		{"node-1", true},
		{"10.0.0.5", true},
		{"fd00::1", true},
		{"[fd00::1]", true},
		{label63 + ".com", true},
		{name253, true},
		{name253 + "b", false},
		{strings.Repeat("a", 64) + ".com", false},
		{"", false},
		{"nspl.example.com:8001", false},
		{"https://nspl.example.com", false},
		{"nspl.example.com/console", false},
		{"-bad.example", false},
		{"bad-.example", false},
		{"a..b", false},
		{"[10.0.0.5]", false},
		{"na me", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateAllowedHost(tc.name)
			if tc.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrAllowedHost)
		})
	}
}

// FuzzHostAllowed: any Host value is judged without a panic; a value
// judged loopback has a loopback name, and appending a foreign suffix to
// an allowed name never keeps it allowed.
func FuzzHostAllowed(f *testing.F) {
	for _, s := range []string{"localhost", "127.0.0.1:8001", "[::1]:8001", "evil.example", "[::1", "127.0.0.1:", "nspl.example.com"} {
		f.Add(s)
	}
	names := []string{"nspl.example.com"}
	f.Fuzz(func(t *testing.T, host string) {
		ok := HostAllowed(host, names)
		if LoopbackHost(host) {
			require.True(t, ok)
		}
		if ValidateAllowedHost(host) == nil && !strings.Contains(host, ":") {
			// A name that may be configured is then answered, with a port too.
			require.True(t, HostAllowed(host, []string{host}), "%q", host)
			require.True(t, HostAllowed(host+":8001", []string{strings.ToUpper(host)}), "%q", host)
		}
		if ok {
			require.False(t, HostAllowed(host+".evil.example", names), "%q", host)
			require.NotContains(t, host, "/")
			require.NotContains(t, host, "@")
		}
	})
}
