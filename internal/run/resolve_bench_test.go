package run

import "testing"

// BenchmarkResolve is what resolving a one-shot answer's settings costs
// (every run pays it before its first request): the flags the benchmark
// scripts type, over the environment, no config file and the defaults.
func BenchmarkResolve(b *testing.B) {
	var flags Settings
	for name, v := range map[string]any{"provider": "openai", "base-url": "http://127.0.0.1:1/v1", "model": "fake-model", "yes": true, "workdir": "/tmp"} {
		if err := flags.Values.Give(name, v, "flag --"+name); err != nil {
			b.Fatal(err)
		}
	}
	env := map[string]string{"HOME": "/home/u", "OPENAI_API_KEY": "not-a-key"}
	in := Inputs{Flags: flags, Getenv: func(k string) string { return env[k] }, Wd: "/tmp"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Resolve(in); err != nil {
			b.Fatal(err)
		}
	}
}
