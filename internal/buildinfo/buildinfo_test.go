package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestDescribeVersion(t *testing.T) {
	t.Parallel()
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	tests := []struct {
		name    string
		version string
		info    *debug.BuildInfo
		want    string
	}{
		{"no build info", "dev", nil, "dev"},
		{"no commit", "v1.2.0", &debug.BuildInfo{}, "v1.2.0"},
		{"commit", "v1.2.0", &debug.BuildInfo{Settings: vcs("0123456789abcdef0123", "false")}, "v1.2.0 (commit 0123456789ab)"},
		{"modified tree", "dev", &debug.BuildInfo{Settings: vcs("0123456789abcdef0123", "true")}, "dev (commit 0123456789ab, modified)"},
		{"short commit", "dev", &debug.BuildInfo{Settings: vcs("abc", "false")}, "dev (commit abc)"},
		{"go install module@version", "dev", &debug.BuildInfo{Main: debug.Module{Version: "v1.3.0"}}, "v1.3.0"},
		{"local build", "dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
		{"link-time version wins", "v2.0.0", &debug.BuildInfo{Main: debug.Module{Version: "v1.3.0"}}, "v2.0.0"},
	}
	for _, tt := range tests {
		if got := Describe(tt.version, tt.info); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
