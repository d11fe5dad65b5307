package run

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/ask-cli/ask/internal/fault"
	"github.com/ask-cli/ask/internal/policy"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/records"
)

func TestParseDecisions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		approve, deny []string
		wantErr       bool
		approved      []string // of c1, c2, c3
		denied        map[string]string
		undecided     []string
	}{
		{name: "one each", approve: []string{"c1"}, deny: []string{"c2=not today"},
			approved: []string{"c1"}, denied: map[string]string{"c2": "denied at ask resume: not today"}, undecided: []string{"c3"}},
		{name: "all but one denied", approve: []string{"all"}, deny: []string{"c3"},
			approved: []string{"c1", "c2"}, denied: map[string]string{"c3": "denied at ask resume"}},
		{name: "all denied but one approved", approve: []string{"c2"}, deny: []string{"all=no deploys on Friday"},
			approved: []string{"c2"}, denied: map[string]string{"c1": "denied at ask resume: no deploys on Friday", "c3": "denied at ask resume: no deploys on Friday"}},
		{name: "a reason may hold =", deny: []string{"c1=a=b"}, denied: map[string]string{"c1": "denied at ask resume: a=b"}, undecided: []string{"c2", "c3"}},
		{name: "nothing", undecided: []string{"c1", "c2", "c3"}},
		{name: "the same call both ways", approve: []string{"c1"}, deny: []string{"c1"}, wantErr: true},
		{name: "all both ways", approve: []string{"all"}, deny: []string{"all"}, wantErr: true},
		{name: "an empty approve", approve: []string{" "}, wantErr: true},
		{name: "an empty deny", deny: []string{"=why"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, err := ParseDecisions(tt.approve, tt.deny)
			if tt.wantErr {
				if k, ok := fault.KindOf(err); !ok || k != fault.Usage {
					t.Fatalf("err %v, want a usage error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var approved, undecided []string
			denied := map[string]string{}
			for _, id := range []string{"c1", "c2", "c3"} {
				reason, no := d.denied(id)
				switch {
				case no && d.approved(id):
					t.Errorf("%s both approved and denied", id)
				case no:
					denied[id] = reason
				case d.approved(id):
					approved = append(approved, id)
				default:
					undecided = append(undecided, id)
				}
			}
			if !slices.Equal(approved, tt.approved) || !maps.Equal(denied, tt.denied) || !slices.Equal(undecided, tt.undecided) {
				t.Errorf("approved %q denied %q undecided %q; want %q %q %q", approved, denied, undecided, tt.approved, tt.denied, tt.undecided)
			}
		})
	}
}

// askAll answers every approval question it is put with one answer, and
// records the calls it was asked about.
type askAll struct {
	answer policy.Answer
	asked  []string
}

func (a *askAll) Approve(_ context.Context, calls []policy.Pending) ([]policy.Answer, error) {
	out := make([]policy.Answer, len(calls))
	for i, c := range calls {
		a.asked = append(a.asked, c.ID)
		out[i] = a.answer
	}
	return out, nil
}

// The decisions answer what they name; a person at the terminal is asked
// only about the rest; without one, the rest waits.
func TestDecisionPrompter(t *testing.T) {
	t.Parallel()
	d, err := ParseDecisions([]string{"c1"}, []string{"c2"})
	if err != nil {
		t.Fatal(err)
	}
	pending := []policy.Pending{{ID: "c1"}, {ID: "c3"}}
	person := &askAll{answer: policy.Yes}
	got, err := decisionPrompter{d, person}.Approve(context.Background(), pending)
	if err != nil || !slices.Equal(got, []policy.Answer{policy.Yes, policy.Yes}) || !slices.Equal(person.asked, []string{"c3"}) {
		t.Errorf("with a person: answers %v (%v), asked %q; want yes, yes and c3 asked alone", got, err, person.asked)
	}
	got, _ = decisionPrompter{d, nil}.Approve(context.Background(), pending)
	if !slices.Equal(got, []policy.Answer{policy.Yes, policy.Later}) {
		t.Errorf("without a person: %v, want yes, later", got)
	}
	// The gate denies c2 before the policy hears of it: not even --yes
	// runs a call the reviewer denied.
	pol := policy.New(policy.ModeAgent, false, true, nil, nil, nil, nil)
	gate := d.resolving(pol)
	v := gate.Check(context.Background(), []providers.ToolCall{{ID: "c2", Name: "anything"}, {ID: "c1", Name: "anything"}})
	if v[0].Allowed || v[0].Reason != "denied at ask resume" || !v[1].Allowed {
		t.Errorf("verdicts %+v: want c2 denied by the reviewer, c1 allowed", v)
	}
}

// A transcript is any bytes: readDeferred never panics on it, and what
// it accepts is a paused step whose waiting calls are all in range, once
// each, named by its deferred list.
func FuzzReadDeferred(f *testing.F) {
	call := providers.ToolCall{ID: "c1", Name: "shell", Arguments: `{"command":"ls"}`}
	good := []records.Event{
		{Type: records.TypeRunStarted, ID: "r1"},
		{Type: records.TypeRunFinished, ID: "r1", Status: records.StatusDeferred, Steps: 1,
			History: []json.RawMessage{json.RawMessage(`{"role":"user","content":"x"}`)},
			Paused:  &records.Paused{Calls: []providers.ToolCall{call}, Results: []providers.ToolResult{{ID: "c1"}}, Deferred: []int{0}}},
	}
	var seed []byte
	for _, ev := range good {
		b, _ := json.Marshal(ev)
		seed = append(append(seed, b...), '\n')
	}
	f.Add(seed)
	f.Add([]byte(`{"type":"run.started","id":"r"}` + "\n" + `{"type":"run.finished","status":"deferred","steps":1,"history":[{}],"paused":{"calls":[{"id":"a"}],"results":[{"id":"a"}],"deferred":[0,0]}}` + "\n"))
	f.Add([]byte("{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := readDeferred(data)
		if err != nil {
			return
		}
		paused := p.end.Paused
		seen := map[int]bool{}
		for _, i := range paused.Deferred {
			if i < 0 || i >= len(paused.Calls) || seen[i] {
				t.Fatalf("accepted a waiting index %d of %d calls (or twice)", i, len(paused.Calls))
			}
			seen[i] = true
		}
		if len(p.end.Deferred) != len(paused.Deferred) {
			t.Fatalf("deferred list %d, paused %d", len(p.end.Deferred), len(paused.Deferred))
		}
		for k, i := range paused.Deferred {
			if p.end.Deferred[k].ID != paused.Calls[i].ID {
				t.Fatalf("waiting call %d is %q, its step's %q", k, p.end.Deferred[k].ID, paused.Calls[i].ID)
			}
		}
		if len(paused.Results) != len(paused.Calls) {
			t.Fatal("results and calls differ in number")
		}
	})
}
