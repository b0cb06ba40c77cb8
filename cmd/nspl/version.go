package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// versionText describes the binary from its build information: the module
// version (the version go install module@version stamps; "(devel)" for a
// build from a checkout), the VCS revision and commit time the go command
// stamps when it builds inside a repository (and whether the tree had
// uncommitted changes), and the toolchain. A binary built without VCS
// information (go build -buildvcs=false, a test binary, a tree outside
// version control) says so instead of printing an empty revision.
func versionText(info *debug.BuildInfo, ok bool) string {
	if !ok || info == nil {
		return fmt.Sprintf("nspl (devel)\nrevision: unknown (no build information in this binary)\ngo: %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	}
	version := info.Main.Version
	if version == "" {
		version = "(devel)"
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	var b strings.Builder
	fmt.Fprintf(&b, "nspl %s\n", version)
	if path := info.Main.Path; path != "" {
		fmt.Fprintf(&b, "module: %s\n", path)
	}
	switch rev := settings["vcs.revision"]; {
	case rev == "":
		b.WriteString("revision: unknown (built without VCS information)\n")
	default:
		if settings["vcs.modified"] == "true" {
			rev += " (modified)"
		}
		fmt.Fprintf(&b, "revision: %s\n", rev)
		if t := settings["vcs.time"]; t != "" {
			fmt.Fprintf(&b, "committed: %s\n", t)
		}
	}
	goVersion := info.GoVersion
	if goVersion == "" {
		goVersion = runtime.Version()
	}
	goos, goarch := settings["GOOS"], settings["GOARCH"]
	if goos == "" || goarch == "" {
		goos, goarch = runtime.GOOS, runtime.GOARCH
	}
	fmt.Fprintf(&b, "go: %s %s/%s\n", goVersion, goos, goarch)
	return b.String()
}

// printVersion prints versionText for this binary.
func (m *Main) printVersion() error {
	info, ok := debug.ReadBuildInfo()
	if _, err := io.WriteString(m.Stdout, versionText(info, ok)); err != nil {
		return ioError(err)
	}
	return nil
}
