package main

import "runtime/debug"

// describeVersion is the version with the commit the binary was built
// from, as `ask --version` prints it: "v1.2.0 (commit 0123456789ab)",
// with ", modified" when the tree had uncommitted changes. A binary built
// by `go install module@version` has no commit but knows its version.
func describeVersion(v string, info *debug.BuildInfo) string {
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
