// Package buildinfo says which build of ask is running: the version it
// was given at link time or by `go install`, and the commit it was built
// from.
package buildinfo

import "runtime/debug"

// Version is the linked version described with the binary's build info.
func Version(linked string) string {
	info, _ := debug.ReadBuildInfo()
	return Describe(linked, info)
}

// Describe is the version v with the commit the binary was built
// from, as `ask --version` prints it: "v1.2.0 (commit 0123456789ab)",
// with ", modified" when the tree had uncommitted changes. A binary built
// by `go install module@version` has no commit but knows its version.
func Describe(v string, info *debug.BuildInfo) string {
	if info == nil {
		return v
	}
	if v == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		v = info.Main.Version
	}
	commit, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if commit == "" {
		return v
	}
	if len(commit) > 12 {
		commit = commit[:12]
	}
	v += " (commit " + commit
	if dirty {
		v += ", modified"
	}
	return v + ")"
}
