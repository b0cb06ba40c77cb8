package main

import (
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
)

// walkScripts walks the tree at dir for nspl fmt and nspl test: it calls
// script for every *.nspl entry that is not a symbolic link (the caller
// decides what a non-regular one is), notes each symbolic link it skips
// on stderr as "nspl COMMAND: skipping PATH, a symbolic link", and calls
// failed for every entry it cannot read, skipping an unreadable directory
// below dir. No link is followed. It returns the walk's own error.
func walkScripts(dir, command string, stderr io.Writer, script func(path string, d fs.DirEntry), failed func(path string, err error)) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			failed(p, err)
			if d != nil && d.IsDir() && p != dir {
				return filepath.SkipDir
			}
		case d.Type()&fs.ModeSymlink != 0:
			fmt.Fprintf(stderr, "nspl %s: skipping %s, a symbolic link\n", command, p)
		case !d.IsDir() && strings.HasSuffix(d.Name(), ".nspl"):
			script(p, d)
		}
		return nil
	})
}
