package hooklib

import "testing"

// TestGroupsHoldEveryVar: each variable ccm reads is in exactly one
// feature's group, and each name a group lists is a variable.
func TestGroupsHoldEveryVar(t *testing.T) {
	known := map[string]bool{}
	for _, v := range Vars {
		known[v.Name] = true
	}
	seen := map[string]string{}
	for _, g := range varGroups {
		for _, n := range g.names {
			if !known[n] {
				t.Errorf("group %q lists %s, which is no variable", g.feature, n)
			}
			if other, dup := seen[n]; dup {
				t.Errorf("%s is in %q and %q", n, other, g.feature)
			}
			seen[n] = g.feature
		}
	}
	for _, v := range Vars {
		if _, ok := seen[v.Name]; !ok {
			t.Errorf("%s is in no group of varGroups", v.Name)
		}
	}
	n := 0
	for _, g := range Groups() {
		n += len(g.Vars)
		if g.Feature == "other" {
			t.Errorf("variables in no group: %v", g.Vars)
		}
	}
	if n != len(Vars) {
		t.Errorf("Groups lists %d variables, Vars has %d", n, len(Vars))
	}
}
