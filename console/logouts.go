package console

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"

	"github.com/nspl-dev/nspl/internal/atomicfile"
)

// MaxLogouts bounds the logged-out logins a console keeps refusing. One
// more logout while that many have not yet expired ends every login issued
// until then instead (they must log in again), so the set never grows past
// it and no logged-out login comes back.
const MaxLogouts = 4096

// logoutsVersion is the version of the logout file's format.
const logoutsVersion = 1

// ErrLogoutFile: the file a console keeps its logouts in cannot be read.
var ErrLogoutFile = errors.New("console logout file")

// logouts is the set of logins ended by logout, each refused until it
// would have expired, and a floor: every login issued before notBefore is
// refused too. With a path it is kept in that file, replaced whole and
// crash-safely on every logout, so a restart of the node keeps every
// refusal. Callers hold the console's lock.
type logouts struct {
	path      string
	notBefore int64            // Unix ns; logins issued before it are refused
	ids       map[string]int64 // login id → its expiry, Unix ns
}

// logoutFile is the file's JSON form.
type logoutFile struct {
	Version   int              `json:"version"`
	NotBefore int64            `json:"not_before"`
	Logouts   map[string]int64 `json:"logouts"`
}

// loadLogouts reads the logouts kept at path (none when path is empty or
// the file does not exist yet), dropping those expired by now. A file that
// exists but does not read is an error: starting without it would let its
// logged-out logins back in.
func loadLogouts(path string, now int64) (*logouts, error) {
	l := &logouts{path: path, ids: make(map[string]int64)}
	if path == "" {
		return l, nil
	}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return l, nil
	case err != nil:
		return nil, fmt.Errorf("%w: %v", ErrLogoutFile, err)
	}
	var f logoutFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%w %s does not decode (%v): remove it to end every console login of this node", ErrLogoutFile, path, err)
	}
	if f.Version != logoutsVersion {
		return nil, fmt.Errorf("%w %s has version %d, this build reads %d: remove it to end every console login of this node",
			ErrLogoutFile, path, f.Version, logoutsVersion)
	}
	l.notBefore = f.NotBefore
	for id, exp := range f.Logouts {
		if exp > now {
			l.ids[id] = exp
		}
	}
	if len(l.ids) > MaxLogouts { // not a file this console wrote: end every login
		l.notBefore, l.ids = now, make(map[string]int64)
	}
	return l, nil
}

// refused reports whether the login id, issued at issued and expiring at
// expires, was logged out.
func (l *logouts) refused(id string, issued int64) bool {
	if issued < l.notBefore {
		return true
	}
	_, out := l.ids[id]
	return out
}

// add refuses the login id until expires, forgetting logouts expired by
// now; when MaxLogouts are still current it refuses every login issued
// before now instead. It then keeps the set in its file; on an error the
// refusal still holds until the process ends.
func (l *logouts) add(id string, expires, now int64) error {
	maps.DeleteFunc(l.ids, func(_ string, exp int64) bool { return exp <= now })
	if len(l.ids) >= MaxLogouts {
		l.notBefore, l.ids = now, make(map[string]int64)
	} else {
		l.ids[id] = expires
	}
	if l.path == "" {
		return nil
	}
	data, err := json.Marshal(logoutFile{Version: logoutsVersion, NotBefore: l.notBefore, Logouts: l.ids})
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(l.path, data, 0o600); err != nil {
		return fmt.Errorf("%w: %v", ErrLogoutFile, err)
	}
	return nil
}
