package main

import (
	"fmt"
	"os"
)

// checkPrivate refuses a secret file (a private key or a bearer token) that
// users other than its owner can read or write: a node started from it
// would serve with a credential anybody on the host may have copied. It
// follows a symbolic link, since what matters is the file that is read.
func checkPrivate(flag, path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return ioError(fmt.Errorf("serve: %s: %w", flag, err))
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		return ioError(fmt.Errorf("serve: %s %q is open to group or others (mode %04o); a key or token must be private to its owner: chmod 600 %s",
			flag, path, perm, shellQuote(path)))
	}
	return nil
}

// shellQuote quotes s for a POSIX shell when it holds anything but the
// characters that are safe bare, so a printed command can be pasted.
func shellQuote(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '/' || c == '.' || c == '-' || c == '_' {
			continue
		}
		out := []byte{'\''}
		for j := 0; j < len(s); j++ {
			if s[j] == '\'' {
				out = append(out, `'\''`...)
				continue
			}
			out = append(out, s[j])
		}
		return string(append(out, '\''))
	}
	if s == "" {
		return "''"
	}
	return s
}
