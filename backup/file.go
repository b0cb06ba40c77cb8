package backup

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// ExpandPath resolves a path as the statements and the CLI take it: a
// leading "~/" (or a lone "~") is the home directory, and the result is
// absolute and clean. An empty path, or "~" without a home directory, is
// an ErrPath error.
func ExpandPath(path string) (string, error) {
	if path == "" {
		return "", fmt.Errorf("%w: the path is empty; give a file such as '~/prod.nsplbak'", ErrPath)
	}
	if strings.ContainsRune(path, 0) {
		return "", fmt.Errorf("%w: path %q holds a NUL byte", ErrPath, path)
	}
	if path == "~" || strings.HasPrefix(path, "~/") {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			return "", fmt.Errorf("%w: path '%s' starts with '~' but the home directory is unknown (%v); give an absolute path", ErrPath, path, err)
		}
		path = filepath.Join(home, strings.TrimPrefix(path[1:], "/"))
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("%w: path '%s': %v", ErrPath, path, err)
	}
	return abs, nil
}

// Write encodes a and writes it to path crash-safely: to a private 0600
// temporary file in the destination's directory, fsynced, renamed over the
// destination only once complete, then the directory fsynced. The
// destination never holds a partial archive; on failure the temporary
// file is removed and an existing destination is left as it was. It
// returns the resolved path and the archive's size.
func Write(path string, a Archive) (string, int64, error) {
	dest, err := ExpandPath(path)
	if err != nil {
		return "", 0, err
	}
	if fi, err := os.Stat(dest); err == nil && fi.IsDir() {
		return dest, 0, fmt.Errorf("%w: '%s' is a directory; name a file such as '%s'", ErrPath, dest, filepath.Join(dest, "backup.nsplbak"))
	}
	b, err := Encode(a)
	if err != nil {
		return dest, 0, err
	}
	dir := filepath.Dir(dest)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(dest)+".tmp-*")
	if err != nil {
		return dest, 0, fmt.Errorf("%w: cannot create a file in '%s': %v; check the directory exists and is writable", ErrPath, dir, err)
	}
	done := false
	defer func() {
		if !done {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(0o600); err != nil {
		return dest, 0, fmt.Errorf("%w: chmod '%s': %v", ErrPath, tmp.Name(), err)
	}
	if _, err := tmp.Write(b); err != nil {
		return dest, 0, fmt.Errorf("%w: write '%s': %v", ErrPath, tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		return dest, 0, fmt.Errorf("%w: fsync '%s': %v", ErrPath, tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return dest, 0, fmt.Errorf("%w: close '%s': %v", ErrPath, tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), dest); err != nil {
		return dest, 0, fmt.Errorf("%w: rename to '%s': %v", ErrPath, dest, err)
	}
	done = true
	if err := syncDir(dir); err != nil {
		return dest, int64(len(b)), fmt.Errorf("%w: the archive '%s' is complete but fsync of its directory failed: %v", ErrPath, dest, err)
	}
	return dest, int64(len(b)), nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Read reads and verifies the archive at path (after ExpandPath). A regular
// file over MaxArchiveBytes is refused unread; otherwise it reads at most
// MaxArchiveBytes+1 bytes, whatever the file claims, and returns
// the resolved path with the archive. A failed check is a *CheckError
// whose Path is set.
func Read(path string) (string, Archive, error) {
	p, err := ExpandPath(path)
	if err != nil {
		return "", Archive{}, err
	}
	f, err := os.Open(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return p, Archive{}, fmt.Errorf("%w: backup '%s' does not exist; check the path", ErrPath, p)
		}
		return p, Archive{}, fmt.Errorf("%w: open '%s': %v", ErrPath, p, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil {
		switch {
		case fi.IsDir():
			return p, Archive{}, fmt.Errorf("%w: '%s' is a directory, not a backup archive", ErrPath, p)
		case fi.Mode().IsRegular() && fi.Size() > MaxArchiveBytes:
			ce := fail(wholeSection, "length", ErrTooLarge, "%d bytes is over the %d-byte archive cap", fi.Size(), MaxArchiveBytes)
			ce.Path = p
			return p, Archive{}, ce
		}
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxArchiveBytes+1))
	if err != nil {
		return p, Archive{}, fmt.Errorf("%w: read '%s': %v", ErrPath, p, err)
	}
	a, err := Decode(b)
	if err != nil {
		var ce *CheckError
		if errors.As(err, &ce) {
			ce.Path = p
		}
		return p, Archive{}, err
	}
	return p, a, nil
}
