package testpki

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/pki"
)

func TestIssuedMaterialCarriesItsIdentity(t *testing.T) {
	a := New(t)
	n := a.Node("n1", "127.0.0.1")
	require.Equal(t, pki.Identity{Role: pki.RoleNode, Name: "n1"}, n.Identity)
	c := a.Client("alice")
	require.Equal(t, pki.Identity{Role: pki.RoleClient, Name: "alice"}, c.Identity)
	require.NotSame(t, New(t).CA, a.CA, "each call makes a new CA")
}
