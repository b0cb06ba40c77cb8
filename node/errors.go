package node

import (
	"errors"

	"github.com/nspl-dev/nspl/wire"
)

// Sentinel errors of the node. Lifecycle refusals are *lifecycle.Error
// values and catalog failures catalog sentinels; these cover what is the
// node's own.
var (
	// ErrClosed: the node is closed. It is wire.ErrClosed, the one closed
	// error of the module, so a session on a closed node and its remote
	// client see the closed error they see for a closed session.
	ErrClosed = wire.ErrClosed
	// ErrConfig: the Config is invalid.
	ErrConfig = errors.New("invalid node configuration")
	// ErrNotTransactional: a step that is none of START, STOP and ALTER
	// DOMAIN SET PLACEMENT was handed to CommitTransaction or
	// PreflightTransaction; only those can be queued.
	ErrNotTransactional = errors.New("statement cannot be part of a transaction; only START, STOP and ALTER DOMAIN SET PLACEMENT can be queued")
	// ErrNotInArchive: a restore named a domain the backup does not hold,
	// or the backup holds no domain at all.
	ErrNotInArchive = errors.New("domain is not in the backup")
	// ErrNotReady: the node cannot serve yet or any more (Ready says
	// why).
	ErrNotReady = errors.New("node is not ready")
)
