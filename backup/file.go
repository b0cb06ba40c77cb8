package backup

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/nspl-dev/nspl/internal/atomicfile"
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

// WriteOptions says what WriteFile may replace.
type WriteOptions struct {
	// Overwrite lets WriteFile replace an existing destination that is not
	// an nspl archive. Without it only a missing file, an empty regular
	// file or a file that already holds an nspl archive is replaced.
	Overwrite bool
}

// Write encodes a and writes it to path crash-safely (WriteFile), replacing
// a missing file, an empty one or an older archive, and any other file
// only with opts.Overwrite. It returns the resolved path and the archive's
// size.
func Write(path string, a Archive, opts WriteOptions) (string, int64, error) {
	dest, err := ExpandPath(path)
	if err != nil {
		return "", 0, err
	}
	b, err := Encode(a)
	if err != nil {
		return dest, 0, err
	}
	dest, err = WriteFile(dest, b, opts)
	if err != nil {
		return dest, 0, err
	}
	return dest, int64(len(b)), nil
}

// WriteFile writes the encoded archive b to path (after ExpandPath)
// crash-safely with atomicfile.WriteFile: to a private 0600 temporary
// file in the destination's directory, fsynced, renamed over the
// destination only once complete, then the directory fsynced. The
// destination never holds a partial archive; on failure the temporary file
// is removed and an existing destination is left as it was. A symbolic link
// at the destination is replaced, never written through. A directory is
// never replaced, and without opts.Overwrite neither is a file that is not
// an nspl archive (CheckReplace). It returns the resolved path. WriteFile does not decode b: callers write only what
// Encode returned or Decode accepted.
func WriteFile(path string, b []byte, opts WriteOptions) (string, error) {
	dest, err := ExpandPath(path)
	if err != nil {
		return "", err
	}
	if opts.Overwrite {
		if fi, err := os.Stat(dest); err == nil && fi.IsDir() {
			return dest, errIsDir(dest)
		}
	} else if err := CheckReplace(dest); err != nil {
		return dest, err
	}
	if err := atomicfile.WriteFile(dest, b, 0o600); err != nil {
		hint := ""
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			hint = "; check the directory exists and is writable"
		}
		return dest, fmt.Errorf("%w: writing '%s': %w%s", ErrPath, dest, err, hint)
	}
	return dest, nil
}

func errIsDir(dest string) error {
	return fmt.Errorf("%w: '%s' is a directory; name a file such as '%s'", ErrPath, dest, filepath.Join(dest, "backup.nsplbak"))
}

// CheckReplace returns nil when an archive may be written at dest (an
// expanded path) without losing anything but an older archive: dest does
// not exist, is an empty regular file, or is a regular file whose first
// tar entry is an nspl archive's manifest. A directory is an ErrPath
// error; a symbolic link, a device, a FIFO or a regular file holding
// anything else is ErrNotArchive. The check follows no symbolic link and
// never blocks on a FIFO.
func CheckReplace(dest string) error {
	fi, err := os.Lstat(dest)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: '%s': %v", ErrPath, dest, err)
	}
	switch {
	case fi.IsDir():
		return errIsDir(dest)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%w: '%s' exists and is not a regular file (%s); name another file, or remove it first", ErrNotArchive, dest, fi.Mode().Type())
	case fi.Size() == 0:
		return nil
	}
	f, err := os.OpenFile(dest, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return fmt.Errorf("%w: open '%s': %v", ErrPath, dest, err)
	}
	defer f.Close()
	block := make([]byte, blockSize)
	n, _ := io.ReadFull(f, block)
	if !isArchiveHeader(block[:n]) {
		return fmt.Errorf("%w: '%s' exists and holds something else; name another file, remove it first, or allow overwriting it", ErrNotArchive, dest)
	}
	return nil
}

// isArchiveHeader reports whether block is the ustar header of an
// archive's first entry, its manifest.
func isArchiveHeader(block []byte) bool {
	const magicAt = 257
	name := entryPrefix + manifestName
	return len(block) == blockSize && bytes.HasPrefix(block, []byte(name+"\x00")) &&
		bytes.HasPrefix(block[magicAt:], []byte("ustar"))
}

// Read reads the archive at path (ReadFile) and verifies it (Decode). It
// returns the resolved path with the archive. A failed check is a
// *CheckError whose Path is set.
func Read(path string) (string, Archive, error) {
	p, b, err := ReadFile(path)
	if err != nil {
		return p, Archive{}, err
	}
	a, err := DecodeNamed(p, b)
	return p, a, err
}

// DecodeNamed is Decode for an archive that came from the file name: a
// failed check is a *CheckError whose Path is name.
func DecodeNamed(name string, b []byte) (Archive, error) {
	a, err := Decode(b)
	if err != nil {
		var ce *CheckError
		if errors.As(err, &ce) {
			ce.Path = name
		}
		return Archive{}, err
	}
	return a, nil
}

// ReadFile returns the bytes of the archive file at path (after
// ExpandPath), unverified, with the resolved path. Only a regular file is
// read: a directory, a device or a FIFO is an ErrPath error, and a FIFO is
// opened without blocking to find that out. A file over MaxArchiveBytes is
// refused (a *CheckError matching ErrTooLarge): unread when its size says
// so, otherwise as soon as more than MaxArchiveBytes bytes were read.
func ReadFile(path string) (string, []byte, error) {
	p, err := ExpandPath(path)
	if err != nil {
		return "", nil, err
	}
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return p, nil, fmt.Errorf("%w: backup '%s' does not exist; check the path", ErrPath, p)
		}
		return p, nil, fmt.Errorf("%w: open '%s': %v", ErrPath, p, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return p, nil, fmt.Errorf("%w: stat '%s': %v", ErrPath, p, err)
	}
	switch {
	case fi.IsDir():
		return p, nil, fmt.Errorf("%w: '%s' is a directory, not a backup archive", ErrPath, p)
	case !fi.Mode().IsRegular():
		return p, nil, fmt.Errorf("%w: '%s' is not a regular file (%s); a backup archive is a file", ErrPath, p, fi.Mode().Type())
	case fi.Size() > MaxArchiveBytes:
		return p, nil, tooLarge(p, fmt.Sprintf("%d bytes", fi.Size()))
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxArchiveBytes+1))
	if err != nil {
		return p, nil, fmt.Errorf("%w: read '%s': %v", ErrPath, p, err)
	}
	if len(b) > MaxArchiveBytes {
		return p, nil, tooLarge(p, fmt.Sprintf("more than %d bytes", MaxArchiveBytes))
	}
	return p, b, nil
}

// tooLarge is the *CheckError of an archive of size (as text) over the cap.
func tooLarge(name, size string) *CheckError {
	ce := fail(wholeSection, "length", ErrTooLarge, "%s is over the %d-byte archive cap", size, MaxArchiveBytes)
	ce.Path = name
	return ce
}
