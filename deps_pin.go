//go:build nspl_deps

package nspl

import (
	_ "github.com/alecthomas/participle/v2"
	_ "github.com/chzyer/readline"
	_ "github.com/hashicorp/go-hclog"
	_ "github.com/hashicorp/raft"
	_ "github.com/hashicorp/raft-boltdb/v2"
	_ "github.com/olekukonko/tablewriter"
	_ "github.com/rogpeppe/go-internal/testscript"
	_ "github.com/stretchr/testify/require"
	_ "go.uber.org/goleak"
)
