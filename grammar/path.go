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

func buildBackup(n Node, p *pBackup) (Statement, *Error) {
	st := &Backup{Node: n, Cluster: p.Cluster}
	if p.Name != nil {
		name, err := buildName(p.Name)
		if err != nil {
			return nil, err
		}
		st.Name = &name
	}
	path, err := buildPath(p.Path)
	if err != nil {
		return nil, err
	}
	st.Path = path
	return st, nil
}

func buildRestore(n Node, p *pRestore) (Statement, *Error) {
	st := &Restore{Node: n, Cluster: p.Cluster, Resume: p.Resume, DryRun: p.DryRun}
	if p.Name != nil {
		name, err := buildName(p.Name)
		if err != nil {
			return nil, err
		}
		st.Name = &name
	}
	if p.As != nil {
		name, err := buildName(p.As)
		if err != nil {
			return nil, err
		}
		st.As = &name
	}
	path, err := buildPath(p.Path)
	if err != nil {
		return nil, err
	}
	st.Path = path
	return st, nil
}
