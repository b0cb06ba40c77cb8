package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// checkConfigTrust refuses a config file that anyone but its reader (or
// root) could have written, wrapping ErrConfigUnsafe: the file chooses which
// CA the shell trusts and which token it sends, so a file another user can
// change, or replace, hands them the connection. info is the opened file's;
// path is its name; uid is the reader's.
//
// The file must be owned by uid or by root and not be writable by group or
// others. Every directory from the one holding the file (after its
// symbolic links are resolved) up to the root must be owned by uid or root
// and not be writable by group or others, unless it has the sticky bit
// (as /tmp does): there only a file's owner may rename or remove it, so
// another user can neither swap the file nor the directory below it. The
// owner rule for directories still holds there, since an owner can take
// the sticky bit away.
func checkConfigTrust(path string, info fs.FileInfo, uid int) error {
	trusted := func(owner int) bool { return owner == uid || owner == 0 }
	if owner, ok := fileOwner(info); ok && !trusted(owner) {
		return fmt.Errorf("%w: %s is owned by uid %d, not by you (uid %d) or root; remove it, or run chown %d %s", ErrConfigUnsafe, path, owner, uid, uid, path)
	}
	if info.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%w: %s is mode %04o; run chmod go-w %s", ErrConfigUnsafe, path, info.Mode().Perm(), path)
	}
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		return fmt.Errorf("%w: resolve %s: %v", ErrConfigUnsafe, path, err)
	}
	abs, err := filepath.Abs(resolved)
	if err != nil {
		return fmt.Errorf("%w: resolve %s: %v", ErrConfigUnsafe, path, err)
	}
	for dir := filepath.Dir(abs); ; dir = filepath.Dir(dir) {
		di, err := os.Stat(dir)
		if err != nil {
			return fmt.Errorf("%w: stat %s, a directory above %s: %v", ErrConfigUnsafe, dir, path, err)
		}
		if owner, ok := fileOwner(di); ok && !trusted(owner) {
			return fmt.Errorf("%w: %s is in directory %s, owned by uid %d, not by you (uid %d) or root; move the file to a directory of your own", ErrConfigUnsafe, path, dir, owner, uid)
		}
		if di.Mode().Perm()&0o022 != 0 && di.Mode()&fs.ModeSticky == 0 {
			return fmt.Errorf("%w: %s is in directory %s, which others can write (mode %04o); run chmod go-w %s", ErrConfigUnsafe, path, dir, di.Mode().Perm(), dir)
		}
		if parent := filepath.Dir(dir); parent == dir {
			return nil
		}
	}
}
