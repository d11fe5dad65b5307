// Command actionwf writes the steps of a composite action (action.yml) as
// a workflow, its inputs as the workflow's inputs, so that actionlint,
// which reads only workflows, checks the action's steps: their
// expressions, their contexts and, where shellcheck is installed, their
// scripts. scripts/actionlint.sh runs it.
//
//	go run ./scripts/actionwf action.yml > .github/workflows/action.yml
package main

import (
	"fmt"
	"os"

	"go.yaml.in/yaml/v3"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: actionwf ACTION.yml > WORKFLOW.yml")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintf(os.Stderr, "actionwf: %v\n", err)
		os.Exit(1)
	}
}

type action struct {
	Name   string `yaml:"name"`
	Inputs map[string]struct {
		Default  string `yaml:"default"`
		Required bool   `yaml:"required"`
	} `yaml:"inputs"`
	Runs struct {
		Using string    `yaml:"using"`
		Steps yaml.Node `yaml:"steps"`
	} `yaml:"runs"`
}

func run(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var a action
	if err := yaml.Unmarshal(data, &a); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if a.Runs.Using != "composite" {
		return fmt.Errorf("%s: runs.using is %q, not composite: it has no steps to check", path, a.Runs.Using)
	}
	type input struct {
		Type     string `yaml:"type"`
		Required bool   `yaml:"required"`
		Default  string `yaml:"default"`
	}
	inputs := map[string]input{}
	for name, in := range a.Inputs {
		inputs[name] = input{Type: "string", Required: in.Required, Default: in.Default}
	}
	wf := map[string]any{
		"name": a.Name + " (the steps of " + path + ")",
		"on":   map[string]any{"workflow_call": map[string]any{"inputs": inputs}},
		"jobs": map[string]any{"action": map[string]any{
			"runs-on": "ubuntu-latest",
			"steps":   &a.Runs.Steps,
		}},
	}
	enc := yaml.NewEncoder(os.Stdout)
	enc.SetIndent(2)
	if err := enc.Encode(wf); err != nil {
		return err
	}
	return enc.Close()
}
