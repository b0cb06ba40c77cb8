// Package atomicfile replaces a file's contents crash-safely: a reader, or
// the file system after a crash, sees the old contents or the new, never a
// mixture or a truncated file.
//
// It is for small files written whole (a formatted script, a data
// directory's server id, a backup archive). It must not be used for a file
// that other processes append to or hold open for writing: the rename gives
// the path a new inode, and their writes go to the old one.
package atomicfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFile writes data to path through a temporary file in the same
// directory that is given mode perm, written, fsynced and renamed over
// path; then the directory is fsynced so the rename survives a crash. It
// follows no symbolic link: when path is one, the link itself is replaced
// by the new regular file and the file it pointed to is untouched (rename
// acts on the name, never on what a link at it names), so a link planted at
// path cannot direct the write elsewhere. On failure the temporary file is
// removed and path is left as it was. Errors name the step that failed.
func WriteFile(path string, data []byte, perm fs.FileMode) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("create a temporary file beside %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if err = tmp.Chmod(perm); err != nil {
		return fmt.Errorf("chmod %s: %w", tmp.Name(), err)
	}
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", tmp.Name(), err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp.Name(), err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("rename %s to %s: %w", tmp.Name(), path, err)
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("%s is written but fsync of its directory failed: %w", path, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		_ = d.Close()
		return err
	}
	return d.Close()
}
