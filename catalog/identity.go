package catalog

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/nspl-dev/nspl/internal/atomicfile"
)

// serverIDFile holds the raft server ID of a data directory. It is written
// once, on the first start, and never changes for the life of the directory.
const serverIDFile = "server-id"

// serverIDLen is the number of random bytes in a server ID; it is written as
// lower-case hex.
const serverIDLen = 16

// newRandomServerID returns a fresh random server ID.
func newRandomServerID() (string, error) {
	var b [serverIDLen]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("catalog: generate server id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// validServerID reports whether id is one newRandomServerID could return.
func validServerID(id []byte) bool {
	if len(id) != 2*serverIDLen {
		return false
	}
	for _, c := range id {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// loadOrCreateServerID returns the server ID persisted in dir, creating and
// persisting a new one when the directory has none. The write is crash-safe:
// a temporary file is written and synced, renamed into place and the
// directory synced, so a crash leaves either no ID or the complete ID.
func loadOrCreateServerID(dir string) (string, error) {
	path := filepath.Join(dir, serverIDFile)
	b, err := readServerIDFile(path)
	switch {
	case err == nil:
		id := bytes.TrimSuffix(b, []byte("\n"))
		if !validServerID(id) {
			return "", fmt.Errorf("%w: server id file %q holds %q, not %d hex digits; restore it from a backup or remove the whole data directory",
				ErrDataDir, path, b, 2*serverIDLen)
		}
		return string(id), nil
	case !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("%w: read server id: %w", ErrDataDir, err)
	}
	id, err := newRandomServerID()
	if err != nil {
		return "", err
	}
	if err := atomicfile.WriteFile(path, []byte(id+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("%w: persist server id: %w", ErrDataDir, err)
	}
	return id, nil
}

// maxServerIDFile bounds the bytes read from the server id file: a valid
// one is far shorter, so a longer file is refused without being read whole.
const maxServerIDFile = 256

// readServerIDFile reads at most maxServerIDFile bytes of path.
func readServerIDFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxServerIDFile))
}

// newIncarnation returns a fresh random, nonzero node incarnation. Every open
// of a node gets a new one, so a restarted process never acts as the
// process before it.
func newIncarnation() (uint64, error) {
	var b [8]byte
	for {
		if _, err := rand.Read(b[:]); err != nil {
			return 0, fmt.Errorf("catalog: generate incarnation: %w", err)
		}
		if v := binary.BigEndian.Uint64(b[:]); v != 0 {
			return v, nil
		}
	}
}
