// Package tools holds what a model may call: the registry that validates and
// runs calls, the built-in tools (read_file, list_directory, search,
// edit_file, write_file, shell), the confinement of file paths to the
// working directory (Root), the change watcher that tells what each call
// changed there (Root.Watch), and the environment handed to child processes
// (ChildEnv).
//
// A tool's failure is not a Go failure of the run: Registry.Call turns every
// problem (unknown tool, bad arguments, a tool error, even a panic) into an
// error result whose text tells the model what went wrong and how to fix it.
//
// Design rule: this package never imports the providers; it knows nothing of
// wire formats.
package tools
