package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The README's three ways to run ask batch on many machines (a GitHub
// Actions matrix, a Slurm array, a Kubernetes Indexed Job) are read from
// README.md as a user copies them, checked for what keeps every shard's
// results, and run: each shard's command with the engine's variables set,
// against the fake, then the merge. scripts/slurm-test.sh runs the Slurm
// script on a real Slurm.

// readmeBlock is the fenced block of README.md in lang whose text holds
// marker.
func readmeBlock(t *testing.T, lang, marker string) string {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?ms)^```" + lang + "\n(.*?)^```$")
	for _, m := range re.FindAllStringSubmatch(string(data), -1) {
		if strings.Contains(m[1], marker) {
			return m[1]
		}
	}
	t.Fatalf("README.md has no %s block holding %q", lang, marker)
	return ""
}

// shardWorld is a folder with tasks.jsonl, where one task line is refused
// (a shard that fails must keep its results), and the fake's environment.
type shardWorld struct {
	dir string
	env []string
	m   *echoModel
	ids []string
}

func newShardWorld(t *testing.T) *shardWorld {
	t.Helper()
	w := &shardWorld{dir: t.TempDir(), m: startEcho(t, 0)}
	var b strings.Builder
	for i := range 12 {
		id := "t" + strconv.Itoa(i)
		w.ids = append(w.ids, id)
		line := `{"id":"` + id + `","prompt":"p` + strconv.Itoa(i) + `","no-tools":true}`
		if i == 5 {
			line = `{"id":"t5","prompt":"p5","modle":"x"}` // refused: its shard exits 2
		}
		b.WriteString(line + "\n")
	}
	if err := os.WriteFile(filepath.Join(w.dir, "tasks.jsonl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	w.env = append(os.Environ(), "ASK_PROVIDER=openai", "ASK_BASE_URL="+w.m.URL, "OPENAI_API_KEY=fake-test-not-a-real-key-0000",
		"HOME="+w.dir, "XDG_STATE_HOME="+w.dir, "JOB_COMPLETION_INDEX=", "SLURM_ARRAY_TASK_ID=", "AWS_BATCH_JOB_ARRAY_INDEX=", "CLOUD_RUN_TASK_INDEX=")
	return w
}

// run runs a shard's shell line in dir with the extra variables, and
// returns its exit code.
func (w *shardWorld) run(t *testing.T, shell, line string, extra ...string) int {
	t.Helper()
	cmd := exec.Command(shell, "-c", line)
	cmd.Dir, cmd.Env = w.dir, append(slices.Clone(w.env), extra...)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
	return 0
}

// checkMerged checks the concatenated result files: one line per task.
func (w *shardWorld) checkMerged(t *testing.T, files []string) {
	t.Helper()
	count := map[string]int{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("a shard left no results: %v", err)
		}
		sc := bufio.NewScanner(strings.NewReader(string(data)))
		for sc.Scan() {
			if m := regexp.MustCompile(`"id":"([^"]+)"`).FindStringSubmatch(sc.Text()); m != nil {
				count[m[1]]++
			}
		}
	}
	for _, id := range w.ids {
		if count[id] != 1 {
			t.Errorf("task %s has %d lines in the merged results, want 1", id, count[id])
		}
	}
	for i := range 12 {
		if n := w.m.sent("p" + strconv.Itoa(i)); i != 5 && n != 1 {
			t.Errorf("p%d was sent %d times, want 1", i, n)
		}
	}
}

func askOnPath(t *testing.T) {
	t.Helper()
	if bin, err := exec.LookPath("ask"); err != nil || !strings.Contains(bin, "testscript-main") {
		t.Fatalf("ask is not the test binary installed by TestMain: %q, %v", bin, err)
	}
}

func TestReadmeGitHubMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("runs four shards paced by --rate")
	}
	t.Parallel()
	askOnPath(t)
	var wf struct {
		On   map[string]any `yaml:"on"`
		Jobs map[string]struct {
			Needs    any    `yaml:"needs"`
			If       string `yaml:"if"`
			Strategy struct {
				FailFast *bool `yaml:"fail-fast"`
				Matrix   struct {
					Shard []int `yaml:"shard"`
				} `yaml:"matrix"`
			} `yaml:"strategy"`
			Steps []struct {
				Uses string            `yaml:"uses"`
				Run  string            `yaml:"run"`
				If   string            `yaml:"if"`
				Env  map[string]string `yaml:"env"`
				With map[string]string `yaml:"with"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal([]byte(readmeBlock(t, "yaml", "name: ask batch")), &wf); err != nil {
		t.Fatal(err)
	}
	shard, merge := wf.Jobs["shard"], wf.Jobs["merge"]
	if wf.On == nil {
		t.Error("the workflow has no on: it is a fragment")
	}
	if ff := shard.Strategy.FailFast; ff == nil || *ff {
		t.Error("the matrix must set fail-fast: false, or one failing shard cancels the others")
	}
	var installs bool
	var batchRun string
	for _, s := range shard.Steps {
		installs = installs || strings.Contains(s.Run, "go install github.com/ask-cli/ask/cmd/ask@")
		if strings.Contains(s.Run, "ask batch") {
			batchRun = s.Run
		}
		if strings.HasPrefix(s.Uses, "actions/upload-artifact") && s.If != "always()" {
			t.Errorf("the shard's upload runs only when the shard passed (if: %q): a failed task loses every result", s.If)
		}
	}
	if !installs {
		t.Error("no step installs ask")
	}
	if merge.Needs != "shard" || merge.If != "always()" {
		t.Errorf("the merge job: needs %v, if %q; want needs shard, if always()", merge.Needs, merge.If)
	}
	var mergeRun string
	for _, s := range merge.Steps {
		if strings.Contains(s.Run, "cat results-") {
			mergeRun = s.Run
		}
	}
	if batchRun == "" || mergeRun == "" {
		t.Fatalf("no ask batch step (%q) or merge step (%q)", batchRun, mergeRun)
	}

	// Each shard as its runner would run it, then the merge.
	w := newShardWorld(t)
	var wg sync.WaitGroup
	codes := make([]int, len(shard.Strategy.Matrix.Shard))
	for i, s := range shard.Strategy.Matrix.Shard {
		wg.Go(func() { codes[i] = w.run(t, "bash", batchRun, "SHARD="+strconv.Itoa(s)) })
	}
	wg.Wait()
	if !slices.Contains(codes, 2) {
		t.Errorf("shard exit codes %v: the shard with the refused line should exit 2", codes)
	}
	files, _ := filepath.Glob(filepath.Join(w.dir, "results-*.jsonl"))
	if len(files) != len(codes) {
		t.Fatalf("result files %v, want one a shard", files)
	}
	w.checkMerged(t, files)
	if _, err := exec.LookPath("jq"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("jq is missing: scripts/test.sh installs it in CI")
		}
		t.Skip("jq is missing: the merge step's check is not run")
	}
	if code := w.run(t, "bash", "set -eo pipefail\n"+mergeRun); code != 0 {
		t.Errorf("the merge step exits %d", code)
	}
	// The check must fail when a task is missing or twice.
	os.WriteFile(filepath.Join(w.dir, "results-9.jsonl"), []byte(`{"id":"t0","status":"completed","exit_code":0}`+"\n"), 0o644)
	if code := w.run(t, "bash", "set -eo pipefail\n"+mergeRun); code == 0 {
		t.Error("the merge step passes with a task twice")
	}
}

func TestReadmeSlurmArray(t *testing.T) {
	t.Parallel()
	askOnPath(t)
	script := readmeBlock(t, "bash", "#SBATCH")
	arr := regexp.MustCompile(`(?m)^#SBATCH --array=0-(\d+)$`).FindStringSubmatch(script)
	auto := regexp.MustCompile(`--shard auto/(\d+)`).FindStringSubmatch(script)
	if arr == nil || auto == nil {
		t.Fatalf("the Slurm script needs #SBATCH --array=0-K and --shard auto/N:\n%s", script)
	}
	if last, n := arr[1], auto[1]; strconv.Itoa(mustAtoi(t, last)+1) != n {
		t.Fatalf("the array 0-%s has not N=%s indexes", last, n)
	}
	script = strings.ReplaceAll(script, "--rate 110/m", "") // the pace of a real provider
	w := newShardWorld(t)
	var files []string
	for i := range mustAtoi(t, auto[1]) {
		idx := strconv.Itoa(i)
		// Slurm sets the count to 1 when one index is resubmitted: N must not come from it.
		w.run(t, "bash", script, "SLURM_ARRAY_TASK_ID="+idx, "SLURM_ARRAY_TASK_COUNT=1")
		files = append(files, filepath.Join(w.dir, "results-"+idx+".jsonl"))
	}
	w.checkMerged(t, files)
	// Resubmitted, an index sends nothing again.
	before := len(w.m.Requests())
	w.run(t, "bash", script, "SLURM_ARRAY_TASK_ID=2", "SLURM_ARRAY_TASK_COUNT=1")
	if after := len(w.m.Requests()); after != before {
		t.Errorf("a resubmitted index sent %d requests again", after-before)
	}
}

func TestReadmeIndexedJob(t *testing.T) {
	t.Parallel()
	askOnPath(t)
	var job struct {
		Kind string `yaml:"kind"`
		Spec struct {
			Completions    int    `yaml:"completions"`
			CompletionMode string `yaml:"completionMode"`
			Template       struct {
				Spec struct {
					Containers []struct {
						Command []string `yaml:"command"`
					} `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal([]byte(readmeBlock(t, "yaml", "kind: Job")), &job); err != nil {
		t.Fatal(err)
	}
	if job.Kind != "Job" || job.Spec.CompletionMode != "Indexed" || len(job.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("not one container of an Indexed Job: %+v", job)
	}
	command := job.Spec.Template.Spec.Containers[0].Command
	if len(command) != 3 || command[0] != "sh" || command[1] != "-c" {
		t.Fatalf("command %q: want sh -c LINE", command)
	}
	auto := regexp.MustCompile(`--shard auto/(\d+)`).FindStringSubmatch(command[2])
	if auto == nil || mustAtoi(t, auto[1]) != job.Spec.Completions {
		t.Fatalf("the command's --shard auto/N must have N = completions (%d): %s", job.Spec.Completions, command[2])
	}
	w := newShardWorld(t)
	// The pod's volumes are folders of the test.
	os.Mkdir(filepath.Join(w.dir, "results"), 0o755)
	line := strings.NewReplacer("/results/", w.dir+"/results/", "/tasks/", w.dir+"/", "--rate 110/m", "").Replace(command[2])
	for i := range job.Spec.Completions {
		w.run(t, "sh", line, "JOB_COMPLETION_INDEX="+strconv.Itoa(i))
	}
	files, _ := filepath.Glob(filepath.Join(w.dir, "results", "results-*.jsonl"))
	if len(files) != job.Spec.Completions {
		t.Fatalf("result files %v, want %d", files, job.Spec.Completions)
	}
	w.checkMerged(t, files)
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
