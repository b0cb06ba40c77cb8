package grammar

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseBackupStatements(t *testing.T) {
	name := func(v string) *Name { return &Name{Value: v} }
	for _, tc := range []struct {
		src  string
		want Statement
	}{
		{"BACKUP CLUSTER TO '/b/all.nsplbak';", &Backup{Cluster: true, Path: Path{Value: "/b/all.nsplbak"}}},
		{"backup domain to '~/x'", &Backup{Path: Path{Value: "~/x"}}},
		{"BACKUP DOMAIN Prod TO \"it's.nsplbak\"", &Backup{Name: name("prod"), Path: Path{Value: "it's.nsplbak"}}},
		{"BACKUP DOMAIN `clock` TO 'a''b'", &Backup{Name: name("clock"), Path: Path{Value: "a'b"}}},
		{"RESTORE CLUSTER FROM '/b/all'", &Restore{Cluster: true, Path: Path{Value: "/b/all"}}},
		{"RESTORE CLUSTER FROM '/b/all' RESUME DRY RUN", &Restore{Cluster: true, Path: Path{Value: "/b/all"}, Resume: true, DryRun: true}},
		{"RESTORE DOMAIN prod FROM 'p'", &Restore{Name: name("prod"), Path: Path{Value: "p"}}},
		{"restore domain prod as copy from 'p' resume", &Restore{Name: name("prod"), As: name("copy"), Path: Path{Value: "p"}, Resume: true}},
		{"RESTORE DOMAIN prod AS `to` FROM 'p' DRY RUN;", &Restore{Name: name("prod"), As: name("to"), Path: Path{Value: "p"}, DryRun: true}},
		{"DESCRIBE BACKUP '~/prod.nsplbak'", &DescribeBackup{Path: Path{Value: "~/prod.nsplbak"}}},
		{"DESCRIBE BACKUP 'line\nbreak'", &DescribeBackup{Path: Path{Value: "line\nbreak"}}},
	} {
		t.Run(tc.src, func(t *testing.T) {
			require.Equal(t, tc.want, parseOne(t, tc.src))
		})
	}
}

var backupErrorCases = []struct {
	src  string
	pos  string
	kind error
	msg  string
}{
	{"BACKUP", "1:7", ErrSyntax, "expected CLUSTER or DOMAIN, found end of input"},
	{"BACKUP CLUSTER", "1:15", ErrSyntax, "expected TO, found end of input"},
	{"BACKUP CLUSTER TO", "1:18", ErrSyntax, "expected a quoted path such as '~/prod.nsplbak', found end of input"},
	{"BACKUP CLUSTER TO /tmp/x", "1:19", ErrSyntax, "unexpected character '/'"},
	{"BACKUP CLUSTER TO x", "1:19", ErrSyntax, "expected a quoted path such as '~/prod.nsplbak', found 'x'"},
	{"BACKUP DOMAIN prod", "1:19", ErrSyntax, "expected TO, found end of input"},
	{"BACKUP DOMAIN", "1:14", ErrSyntax, "expected TO or a domain name, found end of input"},
	{"BACKUP DOMAIN prod TO ''", "1:23", ErrInvalidPath, "invalid backup path '': the path is empty"},
	{"BACKUP CLUSTER prod TO 'x'", "1:16", ErrSyntax, "expected TO, found 'prod'"},
	{"RESTORE", "1:8", ErrSyntax, "expected CLUSTER or DOMAIN, found end of input"},
	{"RESTORE DOMAIN FROM 'x'", "1:16", ErrSyntax, "expected a domain name, found FROM"},
	{"RESTORE DOMAIN a AS FROM 'x'", "1:21", ErrSyntax, "expected a domain name, found FROM"},
	{"RESTORE DOMAIN a", "1:17", ErrSyntax, "expected AS or FROM, found end of input"},
	{"RESTORE CLUSTER AS b FROM 'x'", "1:17", ErrSyntax, "expected FROM, found AS"},
	{"RESTORE DOMAIN a FROM 'x' DRY", "1:30", ErrSyntax, "expected RUN, found end of input"},
	{"RESTORE DOMAIN a FROM 'x' DRY RUN RESUME", "1:35", ErrSyntax, "expected ';', found RESUME"},
	{"RESTORE DOMAIN a FROM \"\"", "1:23", ErrInvalidPath, "the path is empty"},
	{"RESTORE DOMAIN a FROM 'x\x00'", "1:23", ErrInvalidPath, "NUL"},
	{"DESCRIBE BACKUP", "1:16", ErrSyntax, "expected a quoted path such as '~/prod.nsplbak', found end of input"},
	{"DESCRIBE BACKUP prod", "1:17", ErrSyntax, "found 'prod'"},
	{"CREATE DOMAIN resume", "1:15", ErrSyntax, "RESUME is a keyword; write `resume` in backticks"},
}

func TestParseBackupErrors(t *testing.T) {
	for _, tc := range backupErrorCases {
		t.Run(tc.src, func(t *testing.T) {
			_, err := ParseStatement(tc.src)
			require.ErrorIs(t, err, tc.kind)
			var e *Error
			require.True(t, errors.As(err, &e))
			require.Equal(t, tc.pos, e.Pos.String(), "%v", err)
			require.Contains(t, err.Error(), tc.msg)
		})
	}
}

func TestSuggestBackup(t *testing.T) {
	for _, tc := range []struct {
		prefix   string
		keywords []string
		domain   bool
		newName  bool
	}{
		{"BACKUP ", []string{"CLUSTER", "DOMAIN"}, false, false},
		{"BACKUP DOMAIN ", []string{"TO"}, true, false},
		{"RESTORE ", []string{"CLUSTER", "DOMAIN"}, false, false},
		{"RESTORE DOMAIN ", nil, false, true},
		{"RESTORE DOMAIN a ", []string{"AS", "FROM"}, false, false},
		{"RESTORE DOMAIN a AS ", nil, false, true},
		{"RESTORE DOMAIN a FROM 'x' ", []string{"DRY", "RESUME"}, false, false},
		{"RESTORE DOMAIN a FROM 'x' RESUME ", []string{"DRY"}, false, false},
		{"DESCRIBE ", []string{"BACKUP", "DOMAIN", "TRANSACTION"}, false, false},
	} {
		t.Run(tc.prefix, func(t *testing.T) {
			s := Suggest(tc.prefix)
			require.Equal(t, tc.keywords, s.Keywords)
			require.Equal(t, tc.domain, s.DomainName)
			require.Equal(t, tc.newName, s.NewName)
		})
	}
}

func TestPathLiterals(t *testing.T) {
	for _, p := range []string{"x", "~/a b/c.nsplbak", "it's", "''", "\"", "line\nbreak", "é"} {
		got, err := ParsePath(p)
		require.NoError(t, err)
		require.Equal(t, p, got)
		st, err := ParseStatement("DESCRIBE BACKUP " + FormatPath(p))
		require.NoError(t, err, FormatPath(p))
		require.Equal(t, p, st.(*DescribeBackup).Path.Value)
	}
	require.Equal(t, "'it''s'", FormatPath("it's"))
	_, err := ParsePath("")
	require.ErrorIs(t, err, ErrInvalidPath)
}

func FuzzParseBackup(f *testing.F) {
	for _, tc := range backupErrorCases {
		f.Add(tc.src)
	}
	f.Add("BACKUP DOMAIN prod TO '~/p'; RESTORE DOMAIN prod AS copy FROM '~/p' RESUME DRY RUN; DESCRIBE BACKUP '~/p'")
	f.Fuzz(func(t *testing.T, src string) {
		stmts, err := Parse(src)
		if err != nil {
			var e *Error
			require.True(t, errors.As(err, &e), "%T %v", err, err)
			require.True(t, e.Pos.Offset >= 0 && e.Pos.Offset <= len(src), "%v", e.Pos)
		}
		for _, st := range stmts {
			require.True(t, st.Pos().Offset < st.EndPos().Offset && st.EndPos().Offset <= len(src))
		}
	})
}
