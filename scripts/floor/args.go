//go:build !stack

package main

import (
	"flag"
	"strings"
)

func parseArgs() options {
	var opt options
	flag.StringVar(&opt.base, "base-url", "", "Chat Completions base URL")
	flag.StringVar(&opt.model, "model", "", "model")
	flag.IntVar(&opt.steps, "max-steps", 10, "most requests")
	flag.StringVar(&opt.workdir, "workdir", ".", "where tools run")
	flag.BoolVar(&opt.version, "version", false, "print the version")
	flag.String("provider", "", "ignored: always Chat Completions")
	for _, name := range []string{"yes", "quiet"} {
		flag.Bool(name, false, "ignored: every call runs, only the answer is printed")
	}
	flag.Parse()
	opt.prompt = strings.Join(flag.Args(), " ")
	return opt
}
