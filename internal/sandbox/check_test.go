package sandbox

import (
	"strings"
	"testing"
)

// Issue 37, item 6: where a layer cannot load (landlock_restrict_self
// refused, say), `ask sandbox check` said the sandbox confines, though
// every sandboxed command was refused. With the layer made to fail as such
// a kernel fails it, the check runs a command confined, sees it refused,
// and says the sandbox does not confine, naming the layer; it never says
// "only with --allow-network" when --allow-network is refused too.
func TestCheckTellsTheTruthWhenALayerCannotLoad(t *testing.T) {
	s := requireSupport(t, Policy{Level: ReadOnly})
	if r := Describe(withTrials(s, nil)); !r.Confines || !r.Network || r.Shortfall() != "" {
		t.Fatalf("on this machine the sandbox confines, yet the check says %+v", r)
	}
	for _, layer := range allLayers {
		t.Run(string(layer), func(t *testing.T) {
			tried := withTrials(s, []Layer{layer})
			r := Describe(tried)
			if r.Confines || r.Network {
				t.Errorf("with %s broken the check says confines %v, network %v", layer, r.Confines, r.Network)
			}
			if got := r.Shortfall(); !strings.Contains(got, "every sandboxed command would be refused") {
				t.Errorf("shortfall %q", got)
			}
			named := false
			for _, l := range r.Layers {
				if l.Layer == string(layer) {
					named = !l.OK && strings.Contains(l.Problem, "broken by a test")
				}
				if l.Layer == "trial" && (l.OK || !strings.Contains(l.Problem, "could not run")) {
					t.Errorf("the trial row: %+v", l)
				}
			}
			if !named {
				t.Errorf("the %s row does not say it failed: %+v", layer, r.Layers)
			}
		})
	}
}

// Without a network namespace, the check says commands are confined only
// with --allow-network when a command did run so; when namespaces are
// refused altogether, it says nothing is confined, since --safe
// --allow-network is refused too.
func TestCheckNetworkVerdict(t *testing.T) {
	s := requireSupport(t, Policy{Level: ReadOnly})
	noNetNS := s
	noNetNS.Network = "cannot make a new network namespace: operation not permitted"
	r := Describe(withTrials(noNetNS, nil))
	if !r.Confines || r.Network || r.Shortfall() != "--sandbox can confine commands here only with --allow-network" {
		t.Errorf("without a network namespace: %+v, %q", r, r.Shortfall())
	}
	noNS := s
	noNS.Namespaces, noNS.NamespacesProblem = "", "cannot make new user, mount, PID and IPC namespaces: operation not permitted"
	r = Describe(withTrials(noNS, nil))
	if r.Confines || r.Network || !strings.Contains(r.Shortfall(), "every sandboxed command would be refused") {
		t.Errorf("without namespaces: %+v, %q", r, r.Shortfall())
	}
}
