package main

import (
	"os"
	"path/filepath"
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
		{name: "unknown key", text: "[profile a]\n\nport = 1\n", wantErr: "cfg:3: config file syntax error: unknown key \"port\""},
		{name: "repeated key", text: "[profile a]\nca = x\nca = y\n", wantErr: "cfg:3: config file syntax error: ca is set twice in profile \"a\""},
		{name: "repeated profile", text: "[profile a]\n[profile b]\n[profile a]\n", wantErr: "cfg:3: config file syntax error: profile \"a\" is defined twice"},
		{name: "not a key", text: "[profile a]\nconnect\n", wantErr: "cfg:2: config file syntax error: \"connect\" is not KEY = VALUE"},
		{name: "empty value", text: "[profile a]\nca =\n", wantErr: "cfg:2: config file syntax error: ca has no value"},
		{name: "other section", text: "[default]\n", wantErr: "cfg:1: config file syntax error: section \"[default]\": write [profile NAME]"},
		{name: "unclosed section", text: "[profile a\n", wantErr: "cfg:1: config file syntax error: section header \"[profile a\" has no closing ]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseConfig("cfg", tt.text)
			if tt.wantErr != "" {
				require.ErrorIs(t, err, ErrConfigSyntax)
				require.ErrorContains(t, err, tt.wantErr)
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
