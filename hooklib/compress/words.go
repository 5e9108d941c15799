package compress

import "sync"

// Word lists. The first six are agentihooks' preprocessor's lists
// (docs/earlier-tools.md, "agentihooks"); the additions close the gaps
// its defects show (the same page, its defects).

// wordSet is a word list looked up as a set. The map is built on the
// first lookup instead of at package initialisation: every `ccm hook`
// process initialises this package and most never compress anything.
type wordSet struct {
	words []string
	once  sync.Once
	m     map[string]bool
}

// has reports whether w is in the set.
func (s *wordSet) has(w string) bool {
	s.once.Do(func() {
		s.m = make(map[string]bool, len(s.words))
		for _, w := range s.words {
			s.m[w] = true
		}
	})
	return s.m[w]
}

// negation words are never touched and keep the small word after them.
// Beyond agentihooks' 13: "nothing", "none" (it shortened them) and their kin.
var negation = &wordSet{words: []string{"never", "don't", "dont", "not", "no", "without", "cannot", "can't", "cant", "won't",
	"wont", "shouldn't", "shouldnt",
	"nothing", "none", "nobody", "nowhere", "neither", "nor", "unless", "except"}}

// assertion words carry the strength of a rule.
var assertion = &wordSet{words: []string{"always", "must", "required", "mandatory", "only", "exactly", "strictly"}}

// actionVerbs are agentihooks' 20 high-stakes verbs with their inflected and
// noun forms: agentihooks protected "delete" but turned "deleted" into
// "dltd".
var actionVerbs = &wordSet{words: []string{
	"push", "pushes", "pushed", "pushing",
	"delete", "deletes", "deleted", "deleting", "deletion", "deletions",
	"commit", "commits", "committed", "committing",
	"deploy", "deploys", "deployed", "deploying",
	"block", "blocks", "blocked", "blocking",
	"destroy", "destroys", "destroyed", "destroying",
	"drop", "drops", "dropped", "dropping",
	"truncate", "truncates", "truncated", "truncating", "truncation",
	"kill", "kills", "killed", "killing",
	"terminate", "terminates", "terminated", "terminating", "termination",
	"rollback", "rollbacks",
	"revert", "reverts", "reverted", "reverting",
	"reset", "resets", "resetting",
	"force", "forces", "forced", "forcing",
	"override", "overrides", "overrode", "overridden", "overriding",
	"disable", "disables", "disabled", "disabling",
	"remove", "removes", "removed", "removing", "removal",
	"detach", "detaches", "detached", "detaching",
	"purge", "purges", "purged", "purging",
	"wipe", "wipes", "wiped", "wiping",
}}

// fillers are the words level 2 may delete, in contexts where that cannot
// change what a sentence says (see standard.go).
var fillers = &wordSet{words: []string{"a", "an", "the", "is", "are", "was", "were", "be", "been", "being",
	"in", "on", "at", "to", "of", "for", "that", "which", "with"}}

// vowelExclusions are never disemvowelled. In agentihooks every one of
// them was shorter than the 7-letter minimum and the list did nothing;
// here their plural and inflected forms count too.
var vowelExclusions = &wordSet{words: []string{"often", "even", "open", "over", "idea", "area", "issue", "error", "user", "order",
	"offer", "later", "after", "config", "token", "debug", "setup", "output", "input", "under", "upper",
	"lower", "outer", "inner", "other"}}

// cliTools start a command line; the tool and its arguments, up to the end
// of the clause, are protected. agentihooks protected only the tool and
// its first word, so "kubectl get services" became "kubectl get svcs".
var cliTools = &wordSet{words: []string{"kubectl", "helm", "terraform", "aws", "gcloud", "docker", "git", "npm", "pip", "cargo",
	"scp", "ssh", "npx", "yarn", "pnpm", "pip3", "curl", "wget", "rm", "mv", "cp", "chmod", "chown", "sudo",
	"systemctl", "journalctl", "gh", "jq", "rsync", "psql", "mysql", "ccm", "claude"}}

// direction words carry where something goes or what state it ends in.
// A filler next to one of them is part of the phrase ("opt in to",
// "turn it on in staging") and stays.
var direction = &wordSet{words: []string{"to", "from", "into", "onto", "on", "off", "in", "out", "up", "down", "over", "through",
	"via", "away", "back", "toward", "towards", "inside", "outside", "within", "across", "between",
	"before", "after", "upon"}}

// modals keep the filler after them: "must be set" is not "must set".
var modals = &wordSet{words: []string{"can", "could", "should", "would", "will", "shall", "may", "might", "must", "do", "does",
	"did", "need", "needs"}}

// motionVerbs take a destination: "deploy to production", "migrate to v2".
// "to" after one of them (or after an action verb) stays.
var motionVerbs = &wordSet{words: []string{"migrate", "migrates", "migrated", "migrating", "move", "moves", "moved", "moving",
	"copy", "copies", "copied", "copying", "send", "sends", "sent", "sending", "switch", "switches",
	"switched", "switching", "promote", "promotes", "promoted", "promoting", "upgrade", "upgrades",
	"upgraded", "upgrading", "downgrade", "downgrades", "downgraded", "downgrading", "point", "points",
	"pointed", "pointing", "redirect", "redirects", "redirected", "route", "routes", "routed", "forward",
	"forwards", "forwarded", "sync", "syncs", "synced", "upload", "uploads", "uploaded", "download",
	"downloads", "downloaded", "write", "writes", "wrote", "written", "writing", "save", "saves", "saved",
	"export", "exports", "exported", "import", "imports", "imported", "connect", "connects", "connected",
	"go", "goes", "went", "change", "changes", "changed", "set", "sets", "add", "adds", "added", "apply",
	"applies", "applied", "pin", "pins", "pinned", "bind", "binds", "bound", "map", "maps", "mapped",
	"convert", "converts", "converted", "rename", "renames", "renamed", "restore", "restores", "restored",
	"scale", "scales", "scaled", "return", "returns", "returned", "release", "released", "ship", "shipped",
	"publish", "published", "merge", "merges", "merged", "rebase", "rebased", "roll", "rolled", "fall",
	"falls", "fell", "escalate", "escalated", "limit", "limited", "belongs", "belong", "refer", "refers",
	"listen", "listens", "reply", "replies", "respond", "responds", "attach", "attaches", "attached"}}

// pairVerbs take a "with": "replace the staging database with the
// production one" must keep its "with" (agentihooks dropped it).
var pairVerbs = &wordSet{words: []string{"replace", "replaces", "replaced", "replacing", "swap", "swaps", "swapped",
	"substitute", "substituted", "overwrite", "overwrites", "overwritten", "merge", "merges", "merged",
	"combine", "combined", "compare", "compared", "pair", "paired", "associate", "associated", "align",
	"aligned", "sync", "synced", "mix", "match", "matched", "patch", "patched", "update", "updates",
	"updated", "populate", "populated", "fill", "filled", "seed", "seeded", "extend", "extended", "mock",
	"mocked", "stub", "stubbed", "wrap", "wrapped", "sign", "signed", "encrypt", "encrypted", "decrypt",
	"tag", "tagged", "label", "labelled", "labeled", "mark", "marked", "share", "shared", "authenticate",
	"authenticated", "register", "registered", "deal", "dealt", "communicate", "collide", "conflict",
	"conflicts", "interfere", "start", "starts", "begin", "begins", "end", "ends", "run", "runs"}}

// quantifierAfterAt: "at least 3" is not "least 3".
var quantifierAfterAt = &wordSet{words: []string{"least", "most", "once", "first", "last", "all", "any"}}

// protectedWord reports whether a lower-case word is in one of the lists
// whose words are never changed.
func protectedWord(w string) bool {
	return negation.has(w) || assertion.has(w) || actionVerbs.has(w)
}
