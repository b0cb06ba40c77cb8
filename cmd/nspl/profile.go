package main

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Connection profiles fill in --connect and its credentials from the
// environment or from a named profile of the config file, so an operator
// does not repeat them on every command. The order, per setting, is:
//
//  1. the flag on the command line;
//  2. with --profile NAME (or NSPL_PROFILE), that profile's setting;
//     without one, the environment: NSPL_CONNECT, NSPL_CA, NSPL_CERT,
//     NSPL_KEY, NSPL_TOKEN_FILE.
//
// A profile is a whole target: the environment is not consulted when one is
// named, so a stray NSPL_CONNECT cannot point a profile's credentials at
// another cluster.
//
// The config file is $XDG_CONFIG_HOME/nspl/config, or ~/.config/nspl/config
// when XDG_CONFIG_HOME is unset. It is read only when a profile is named,
// and it is refused when anyone but its reader or root could have written
// it (checkConfigTrust), since it says which CA to trust and which token to
// send. Its format, parsed strictly (an unknown key, a repeated key or
// profile, or a line outside a profile is an error naming its line number;
// an error never repeats the line, which may hold what the file was not
// meant to show):
//
//	# comments start with # or ;
//	[profile prod]
//	connect    = https://n1:8443,https://n2:8443
//	ca         = ~/certs/ca.crt
//	cert       = ~/certs/client-ops.crt
//	key        = ~/certs/client-ops.key
//	token-file = token
//
// Paths starting with ~/ are in the home directory; other relative paths are
// relative to the config file's directory.

// Errors of the config file.
var (
	// ErrConfigSyntax reports a config file line that cannot be read.
	ErrConfigSyntax = errors.New("config file syntax error")
	// ErrConfigUnsafe reports a config file someone else could have
	// written: owned by another user, writable by others, or in a
	// directory they can change (checkConfigTrust).
	ErrConfigUnsafe = errors.New("config file can be changed by someone else")
	// ErrNoProfile reports a --profile the config file does not hold.
	ErrNoProfile = errors.New("no such profile")
)

// maxConfigBytes bounds the config file read into memory.
const maxConfigBytes = 1 << 20

// profileKeys are the settings a profile may hold, each with where it goes.
var profileKeys = map[string]func(*remoteOptions) *string{
	"connect":    func(o *remoteOptions) *string { return &o.connect },
	"ca":         func(o *remoteOptions) *string { return &o.ca },
	"cert":       func(o *remoteOptions) *string { return &o.cert },
	"key":        func(o *remoteOptions) *string { return &o.key },
	"token-file": func(o *remoteOptions) *string { return &o.tokenFile },
}

// connectionEnv are the environment variables that fill in unset flags when
// no profile is named, each with the flag it stands for.
var connectionEnv = []struct {
	name, flag string
	field      func(*remoteOptions) *string
}{
	{"NSPL_CONNECT", "--connect", profileKeys["connect"]},
	{"NSPL_CA", "--ca", profileKeys["ca"]},
	{"NSPL_CERT", "--cert", profileKeys["cert"]},
	{"NSPL_KEY", "--key", profileKeys["key"]},
	{"NSPL_TOKEN_FILE", "--token-file", profileKeys["token-file"]},
}

// resolveRemote fills the unset connection settings of o from the named
// profile or the environment, then refuses credentials without a target:
// without --connect they would be ignored and the command would run on an
// empty embedded node.
func (m *Main) resolveRemote(o *remoteOptions) error {
	from := map[*string]string{} // where each setting came from, for errors
	for _, k := range []string{"connect", "ca", "cert", "key", "token-file"} {
		if p := profileKeys[k](o); *p != "" {
			from[p] = "--" + k
		}
	}
	name := o.profile
	if name == "" {
		name, _ = m.lookupEnv("NSPL_PROFILE")
	}
	if name != "" {
		prof, path, err := m.loadProfile(name)
		if err != nil {
			return err
		}
		for k, field := range profileKeys {
			if p, v := field(o), *field(&prof); *p == "" && v != "" {
				*p = v
				from[p] = fmt.Sprintf("%s in profile %q of %s", k, name, path)
			}
		}
	} else {
		for _, e := range connectionEnv {
			if p := e.field(o); *p == "" {
				if v, ok := m.lookupEnv(e.name); ok && v != "" {
					*p = v
					from[p] = e.name
				}
			}
		}
	}
	if o.connect != "" {
		o.connectFrom = from[&o.connect]
		return nil
	}
	for _, p := range []*string{&o.ca, &o.cert, &o.key, &o.tokenFile} {
		if *p != "" {
			return usageErrorf("%s needs a node to connect to; give --connect URL (or NSPL_CONNECT, or --profile NAME), or drop it to run on an embedded node", from[p])
		}
	}
	return nil
}

// configPath is where the config file is looked for, or "" when neither
// XDG_CONFIG_HOME nor HOME is set.
func (m *Main) configPath() string {
	if dir, ok := m.lookupEnv("XDG_CONFIG_HOME"); ok && dir != "" {
		return filepath.Join(dir, "nspl", "config")
	}
	if home, ok := m.lookupEnv("HOME"); ok && home != "" {
		return filepath.Join(home, ".config", "nspl", "config")
	}
	return ""
}

// loadProfile reads the config file and returns profile name from it, its
// paths resolved, and the file's path.
func (m *Main) loadProfile(name string) (remoteOptions, string, error) {
	path := m.configPath()
	if path == "" {
		return remoteOptions{}, "", usageErrorf("--profile %q: no config file: set HOME or XDG_CONFIG_HOME", name)
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return remoteOptions{}, path, usageErrorf("--profile %q: %w: there is no config file %s; create it with a [profile %s] section", name, ErrNoProfile, path, name)
	}
	if err != nil {
		return remoteOptions{}, path, ioError(fmt.Errorf("read the config file: %w", err))
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return remoteOptions{}, path, ioError(fmt.Errorf("read the config file: %w", err))
	}
	if err := checkConfigTrust(path, info, m.uid()); err != nil {
		return remoteOptions{}, path, ioError(err)
	}
	b, err := readLimited(f, maxConfigBytes, fmt.Sprintf("config file %q", path))
	if err != nil {
		return remoteOptions{}, path, ioError(fmt.Errorf("read the config file: %w", err))
	}
	profiles, err := parseConfig(path, string(b))
	if err != nil {
		return remoteOptions{}, path, usageErrorf("%w", err)
	}
	prof, ok := profiles[name]
	if !ok {
		return remoteOptions{}, path, usageErrorf("--profile %q: %w in %s; it has %s", name, ErrNoProfile, path, profileList(profiles))
	}
	home, _ := m.lookupEnv("HOME")
	for _, k := range []string{"ca", "cert", "key", "token-file"} {
		p := profileKeys[k](&prof)
		*p = resolveConfigPath(*p, filepath.Dir(path), home)
	}
	return prof, path, nil
}

// profileList names the profiles for an error message.
func profileList(profiles map[string]remoteOptions) string {
	if len(profiles) == 0 {
		return "no profiles"
	}
	names := make([]string, 0, len(profiles))
	for n := range profiles {
		names = append(names, n)
	}
	slices.Sort(names)
	return "profiles " + strings.Join(names, ", ")
}

// resolveConfigPath makes a path of the config file usable from any
// working directory: ~/ is the home directory, a relative path is relative
// to the config file's directory.
func resolveConfigPath(p, dir, home string) string {
	switch {
	case p == "":
		return ""
	case strings.HasPrefix(p, "~/") && home != "":
		return filepath.Join(home, p[2:])
	case filepath.IsAbs(p):
		return p
	default:
		return filepath.Join(dir, p)
	}
}

// maxProfileName is the longest profile name.
const maxProfileName = 64

// validProfileName reports whether name is 1 to maxProfileName ASCII
// letters, digits, '-', '_' or '.': a name an error or the list of
// profiles can print without escaping.
func validProfileName(name string) bool {
	if name == "" || len(name) > maxProfileName {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// parseConfig parses the config file text; file names it in errors. An
// error names the line by its number and never repeats its text: only
// known keys and validated profile names appear in one.
func parseConfig(file, text string) (map[string]remoteOptions, error) {
	profiles := map[string]remoteOptions{}
	var cur *remoteOptions
	var curName string
	seen := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 4096), maxConfigBytes)
	line := 0
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s:%d: %w: %s", file, line, ErrConfigSyntax, fmt.Sprintf(format, args...))
	}
	flush := func() {
		if cur != nil {
			profiles[curName] = *cur
		}
	}
	for sc.Scan() {
		line++
		l := strings.TrimSpace(sc.Text())
		switch {
		case l == "" || l[0] == '#' || l[0] == ';':
			continue
		case l[0] == '[':
			if !strings.HasSuffix(l, "]") {
				return nil, fail("a section header has no closing ]")
			}
			fields := strings.Fields(l[1 : len(l)-1])
			if len(fields) != 2 || fields[0] != "profile" {
				return nil, fail("a section must be written [profile NAME]")
			}
			if !validProfileName(fields[1]) {
				return nil, fail("a profile name is 1 to %d ASCII letters, digits, '-', '_' or '.'", maxProfileName)
			}
			flush()
			curName = fields[1]
			if _, dup := profiles[curName]; dup {
				return nil, fail("profile %q is defined twice", curName)
			}
			cur = &remoteOptions{}
			seen = map[string]bool{}
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			return nil, fail("the line is not KEY = VALUE")
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		field, known := profileKeys[k]
		if !known {
			return nil, fail("unknown key; use connect, ca, cert, key or token-file")
		}
		if cur == nil {
			return nil, fail("%s is outside a profile; put it under [profile NAME]", k)
		}
		if seen[k] {
			return nil, fail("%s is set twice in profile %q", k, curName)
		}
		if v == "" {
			return nil, fail("%s has no value", k)
		}
		seen[k] = true
		*field(cur) = v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w: %v", file, line+1, ErrConfigSyntax, err)
	}
	flush()
	return profiles, nil
}
