package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		want    map[string]remoteOptions
		wantErr string
	}{
		{name: "empty", text: "", want: map[string]remoteOptions{}},
		{name: "profiles and comments", text: "# top\n; also\n[profile a]\nconnect = https://a:1\n  ca=ca.crt  \n\n[ profile  b ]\ntoken-file = t\n",
			want: map[string]remoteOptions{"a": {connect: "https://a:1", ca: "ca.crt"}, "b": {tokenFile: "t"}}},
		{name: "value with =", text: "[profile a]\nconnect = https://a:1/?x=y\n", want: map[string]remoteOptions{"a": {connect: "https://a:1/?x=y"}}},
		{name: "outside a profile", text: "connect = x\n", wantErr: "cfg:1: config file syntax error: connect is outside a profile"},
		{name: "unknown key", text: "[profile a]\n\nport = 1\n", wantErr: "cfg:3: config file syntax error: unknown key; use connect, ca, cert, key or token-file"},
		{name: "repeated key", text: "[profile a]\nca = x\nca = y\n", wantErr: "cfg:3: config file syntax error: ca is set twice in profile \"a\""},
		{name: "repeated profile", text: "[profile a]\n[profile b]\n[profile a]\n", wantErr: "cfg:3: config file syntax error: profile \"a\" is defined twice"},
		{name: "not a key", text: "[profile a]\nconnect\n", wantErr: "cfg:2: config file syntax error: the line is not KEY = VALUE"},
		{name: "empty value", text: "[profile a]\nca =\n", wantErr: "cfg:2: config file syntax error: ca has no value"},
		{name: "other section", text: "[default]\n", wantErr: "cfg:1: config file syntax error: a section must be written [profile NAME]"},
		{name: "unclosed section", text: "[profile a\n", wantErr: "cfg:1: config file syntax error: a section header has no closing ]"},
		{name: "longest profile name", text: "[profile " + strings.Repeat("p", 64) + "]\n", want: map[string]remoteOptions{strings.Repeat("p", 64): {}}},
		{name: "profile name too long", text: "[profile " + strings.Repeat("p", 65) + "]\n", wantErr: "cfg:1: config file syntax error: a profile name is 1 to 64 ASCII letters"},
		{name: "profile name with an escape", text: "[profile a\x1b]0;x\a]\n", wantErr: "cfg:1: config file syntax error: a profile name is 1 to 64"},
		{name: "profile name with every allowed byte", text: "[profile aZ0-_.]\n", want: map[string]remoteOptions{"aZ0-_.": {}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseConfig("cfg", tt.text)
			if tt.wantErr != "" {
				require.ErrorIs(t, err, ErrConfigSyntax)
				require.ErrorContains(t, err, tt.wantErr)
				requireNoLineEchoed(t, tt.text, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestResolveRemote(t *testing.T) {
	dir := t.TempDir()
	cfgDir := filepath.Join(dir, "nspl")
	require.NoError(t, os.MkdirAll(cfgDir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(cfgDir, "config"),
		[]byte("[profile p]\nconnect = https://p:1\nca = ca.crt\ntoken-file = ~/tok\n"), 0o600))
	tests := []struct {
		name    string
		flags   remoteOptions
		env     map[string]string
		want    remoteOptions
		wantErr string
	}{
		{name: "nothing", want: remoteOptions{}},
		{name: "env fills in", env: map[string]string{"NSPL_CONNECT": "https://e:1", "NSPL_CA": "e.crt", "NSPL_CERT": "c", "NSPL_KEY": "k", "NSPL_TOKEN_FILE": "t"},
			want: remoteOptions{connect: "https://e:1", ca: "e.crt", cert: "c", key: "k", tokenFile: "t", connectFrom: "NSPL_CONNECT"}},
		{name: "flags win over env", flags: remoteOptions{connect: "https://f:1", ca: "f.crt"}, env: map[string]string{"NSPL_CONNECT": "https://e:1", "NSPL_CA": "e.crt"},
			want: remoteOptions{connect: "https://f:1", ca: "f.crt", connectFrom: "--connect"}},
		{name: "profile", flags: remoteOptions{profile: "p"}, env: map[string]string{"NSPL_CONNECT": "https://e:1", "NSPL_CERT": "c"},
			want: remoteOptions{profile: "p", connect: "https://p:1", ca: filepath.Join(cfgDir, "ca.crt"), tokenFile: filepath.Join(dir, "home", "tok"),
				connectFrom: `connect in profile "p" of ` + filepath.Join(cfgDir, "config")}},
		{name: "NSPL_PROFILE", env: map[string]string{"NSPL_PROFILE": "p"},
			want: remoteOptions{connect: "https://p:1", ca: filepath.Join(cfgDir, "ca.crt"), tokenFile: filepath.Join(dir, "home", "tok"),
				connectFrom: `connect in profile "p" of ` + filepath.Join(cfgDir, "config")}},
		{name: "flags win over the profile", flags: remoteOptions{profile: "p", ca: "f.crt"},
			want: remoteOptions{profile: "p", connect: "https://p:1", ca: "f.crt", tokenFile: filepath.Join(dir, "home", "tok"),
				connectFrom: `connect in profile "p" of ` + filepath.Join(cfgDir, "config")}},
		{name: "unknown profile", flags: remoteOptions{profile: "q"}, wantErr: `--profile "q": no such profile in ` + filepath.Join(cfgDir, "config") + "; it has profiles p"},
		{name: "a flag without a target", flags: remoteOptions{cert: "c", key: "k"}, wantErr: "--cert needs a node to connect to"},
		{name: "a variable without a target", env: map[string]string{"NSPL_KEY": "k"}, wantErr: "NSPL_KEY needs a node to connect to"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"XDG_CONFIG_HOME": dir, "HOME": filepath.Join(dir, "home")}
			for k, v := range tt.env {
				env[k] = v
			}
			m := &Main{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
			o := tt.flags
			err := m.resolveRemote(&o)
			if tt.wantErr != "" {
				require.ErrorIs(t, err, ErrUsage)
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, o)
		})
	}
}

// configErrorForm is every message parseConfig may return: the line's
// number, then a fixed text naming at most a known key and a validated
// profile name.
var configErrorForm = regexp.MustCompile(`^cfg:[0-9]+: config file syntax error: (` +
	`a section header has no closing \]|` +
	`a section must be written \[profile NAME\]|` +
	`a profile name is 1 to 64 ASCII letters, digits, '-', '_' or '\.'|` +
	`profile "[A-Za-z0-9._-]{1,64}" is defined twice|` +
	`the line is not KEY = VALUE|` +
	`unknown key; use connect, ca, cert, key or token-file|` +
	`(connect|ca|cert|key|token-file) is outside a profile; put it under \[profile NAME\]|` +
	`(connect|ca|cert|key|token-file) is set twice in profile "[A-Za-z0-9._-]{1,64}"|` +
	`(connect|ca|cert|key|token-file) has no value|` +
	`bufio.Scanner: token too long)$`)

// requireNoLineEchoed fails when err is not one of parseConfig's fixed
// messages, so no error repeats text of the file beyond a known key or a
// validated profile name.
func requireNoLineEchoed(t *testing.T, text string, err error) {
	t.Helper()
	require.Regexp(t, configErrorForm, err.Error(), "config text %q", text)
}

// FuzzParseConfig holds that parseConfig never panics and that every error
// it returns is one of its fixed messages, never the text of a line.
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{"", "[profile a]\nconnect = x\n", "token = s3cret\n", "[profile a]\ns3cret\n",
		"[profile a]\nsecret = 1\n", "[s3cret]\n", "[profile a\x1b]\n", "[profile a]\nca = x\nca = y\n",
		"[profile a]\n[profile a]\n", "[profile a]\nca =\n", "[profile s3cret\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		profiles, err := parseConfig("cfg", text)
		if err != nil {
			require.ErrorIs(t, err, ErrConfigSyntax)
			requireNoLineEchoed(t, text, err)
			return
		}
		for name := range profiles {
			require.True(t, validProfileName(name), "profile %q", name)
		}
	})
}

// TestConfigFileTrust holds who may have written a config file nspl
// trusts: it is owned by the reader or root and not writable by group or
// others, and so is every directory above it, unless that directory is
// sticky (and still owned by the reader or root). A refusal names the file,
// or the directory, and what to do. Cases that hand a file to another user
// need root to chown it.
func TestConfigFileTrust(t *testing.T) {
	const other = 4242
	root := os.Getuid() == 0
	tests := []struct {
		name      string
		fileMode  os.FileMode
		dirMode   os.FileMode // of the directory holding nspl/config
		fileOwner int         // 0: the creator's (root's, when only root may run the case)
		dirOwner  int         // 0: the creator's
		reader    int         // 0: the creator
		link      bool        // config is a link to a file in the directory
		wantErr   string      // "" accepts
	}{
		{name: "private file in a private directory", fileMode: 0o600, dirMode: 0o700},
		{name: "group and others may read", fileMode: 0o644, dirMode: 0o755},
		{name: "group may write", fileMode: 0o620, dirMode: 0o700, wantErr: "config is mode 0620; run chmod go-w "},
		{name: "others may write", fileMode: 0o602, dirMode: 0o700, wantErr: "config is mode 0602; run chmod go-w "},
		{name: "another user's file", fileMode: 0o644, dirMode: 0o755, fileOwner: other, wantErr: "config is owned by uid 4242, not by you"},
		{name: "root's file", fileMode: 0o644, dirMode: 0o755, fileOwner: 0, reader: other},
		{name: "a directory others can write", fileMode: 0o600, dirMode: 0o757, wantErr: "which others can write (mode 0757); run chmod go-w "},
		{name: "a directory the group can write", fileMode: 0o600, dirMode: 0o770, wantErr: "which others can write (mode 0770)"},
		{name: "a sticky directory others can write", fileMode: 0o600, dirMode: 0o777 | os.ModeSticky},
		{name: "a sticky directory of another user", fileMode: 0o600, dirMode: 0o777 | os.ModeSticky, dirOwner: other, wantErr: "owned by uid 4242, not by you"},
		{name: "another user's directory", fileMode: 0o600, dirMode: 0o755, dirOwner: other, wantErr: "owned by uid 4242, not by you"},
		{name: "a link to a file in a directory others can write", fileMode: 0o600, dirMode: 0o777, link: true, wantErr: "which others can write (mode 0777)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if (tt.fileOwner > 0 || tt.dirOwner > 0 || tt.reader > 0) && !root {
				t.Skip("handing a file to another user needs root")
			}
			base := t.TempDir()
			dir := filepath.Join(base, "xdg")
			require.NoError(t, os.Mkdir(dir, 0o700))
			cfgDir := filepath.Join(dir, "nspl")
			require.NoError(t, os.Mkdir(cfgDir, 0o700))
			cfg := filepath.Join(cfgDir, "config")
			file, fileDir := cfg, cfgDir
			if tt.link {
				fileDir = filepath.Join(base, "shared")
				require.NoError(t, os.Mkdir(fileDir, 0o700))
				file = filepath.Join(fileDir, "config")
				require.NoError(t, os.Symlink(file, cfg))
			}
			require.NoError(t, os.WriteFile(file, []byte("[profile p]\nconnect = https://p:1\n"), 0o600))
			require.NoError(t, os.Chmod(file, tt.fileMode))
			require.NoError(t, os.Chmod(fileDir, tt.dirMode))
			if tt.fileOwner > 0 {
				require.NoError(t, os.Lchown(file, tt.fileOwner, -1))
			}
			if tt.dirOwner > 0 {
				require.NoError(t, os.Lchown(fileDir, tt.dirOwner, -1))
			}
			m := &Main{LookupEnv: func(k string) (string, bool) {
				if k == "XDG_CONFIG_HOME" {
					return dir, true
				}
				return "", false
			}}
			if tt.reader > 0 {
				m.getuid = func() int { return tt.reader }
			}
			prof, path, err := m.loadProfile("p")
			require.Equal(t, cfg, path)
			if tt.wantErr == "" {
				require.NoError(t, err)
				require.Equal(t, "https://p:1", prof.connect)
				return
			}
			require.ErrorIs(t, err, ErrConfigUnsafe)
			require.ErrorIs(t, err, ErrIO)
			require.ErrorContains(t, err, tt.wantErr)
			require.ErrorContains(t, err, cfg, "the error names the file")
		})
	}
}
