package grammar

import (
	"strings"
)

// ParsePath checks the unquoted text of a backup path literal: any
// non-empty text without a NUL byte. It does not expand "~/" or touch the
// file system. Errors wrap ErrInvalidPath.
func ParsePath(text string) (string, error) {
	switch {
	case text == "":
		return "", newLiteralError(ErrInvalidPath, text, "the path is empty; give a file such as '~/prod.nsplbak'")
	case strings.IndexByte(text, 0) >= 0:
		return "", newLiteralError(ErrInvalidPath, text, "a path cannot hold a NUL byte")
	}
	return text, nil
}

// FormatPath prints a path as an NSPL string literal: in single quotes,
// with each single quote doubled.
func FormatPath(path string) string {
	return "'" + strings.ReplaceAll(path, "'", "''") + "'"
}

func buildPath(p *pToken) (Path, *Error) {
	n := nodeOf(p.Tokens)
	v, err := ParsePath(unquote(p.Text))
	if err != nil {
		return Path{}, literalAt(n, err)
	}
	return Path{Node: n, Value: v}, nil
}

type backupParts struct {
	st   Backup
	name Name
}

func buildBackup(n Node, p *pBackup) (Statement, *Error) {
	parts := &backupParts{st: Backup{Node: n, Cluster: p.Cluster}}
	st := &parts.st
	var err *Error
	if p.Name.Tokens != nil {
		if parts.name, err = buildName(&p.Name); err != nil {
			return nil, err
		}
		st.Name = &parts.name
	}
	if st.Path, err = buildPath(&p.Path); err != nil {
		return nil, err
	}
	return st, nil
}

type restoreParts struct {
	st       Restore
	name, as Name
}

func buildRestore(n Node, p *pRestore) (Statement, *Error) {
	parts := &restoreParts{st: Restore{Node: n, Cluster: p.Cluster, Resume: p.Resume, DryRun: p.DryRun}}
	st := &parts.st
	var err *Error
	if p.Name.Tokens != nil {
		if parts.name, err = buildName(&p.Name); err != nil {
			return nil, err
		}
		st.Name = &parts.name
	}
	if p.As.Tokens != nil {
		if parts.as, err = buildName(&p.As); err != nil {
			return nil, err
		}
		st.As = &parts.as
	}
	if st.Path, err = buildPath(&p.Path); err != nil {
		return nil, err
	}
	return st, nil
}
