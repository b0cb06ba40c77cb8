package console

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLoginTarget: a login returns only to the console's own pages on
// this origin; every other target, an open redirect to another site above
// all, sends the browser to the domains page.
func TestLoginTarget(t *testing.T) {
	for _, tc := range []struct{ next, want string }{
		{"", "/console/"},
		{"/console/", "/console/"},
		{"/console/?domain=prod", "/console/?domain=prod"},
		{"/console/?domain=a%20b&x=1", "/console/?domain=a+b&x=1"},
		{"/console/cluster", "/console/cluster"},
		{"/console/cluster#nodes", "/console/cluster"},
		// Another site, however spelt.
		{"https://evil.example/console/", "/console/"},
		{"//evil.example/console/", "/console/"},
		{"///evil.example/console/", "/console/"},
		{"/\\evil.example/console/", "/console/"},
		{"\\\\evil.example/console/", "/console/"},
		{"/console/\\..\\evil", "/console/"},
		{"https:/console/", "/console/"},
		{"javascript:alert(1)", "/console/"},
		{"//user@evil.example/console/", "/console/"},
		{"/console/\t/cluster", "/console/"},
		{"/\nevil.example", "/console/"},
		// The console's own routes that are not pages, or not its own.
		{"/console/login", "/console/"},
		{"/console/logout", "/console/"},
		{"/console/api/whoami", "/console/"},
		{"/console/static/console.js", "/console/"},
		{"/console/../console/cluster", "/console/"},
		{"/console/%63luster", "/console/"},
		{"/metrics", "/console/"},
		{"console/", "/console/"},
		{"/console/?" + strings.Repeat("a", maxLoginTarget), "/console/"},
	} {
		require.Equal(t, tc.want, loginTarget(tc.next), "next %q", tc.next)
	}
}

// TestLoginURL: a page asked for without a login is sent to the login form
// with itself as its return, the domains page without one.
func TestLoginURL(t *testing.T) {
	require.Equal(t, "/console/login?next=%2Fconsole%2F%3Fdomain%3Dprod", loginURL("/console/?domain=prod"))
	require.Equal(t, "/console/login?next=%2Fconsole%2Fcluster", loginURL("/console/cluster"))
	require.Equal(t, "/console/login", loginURL("/console/"))
	require.Equal(t, "/console/login", loginURL("//evil.example/"))
}
