package transcript

import "testing"

// TestForkSiblingsAttached: parallel calls written as a chain of tool_use
// lines, the conversation continuing from the result of the middle one, so
// the last tool_use line and its result hang beside the walk, and the first
// result carries user text. Claude Code sends all three calls, all three
// results, and the text after them (corpus file 2956cee6, lines 51-62 and
// 135-145, resumed in the real client: every record sent).
func TestForkSiblingsAttached(t *testing.T) {
	tx := &tx{}
	tx.user("u1", "", "hello")                                                                                                                                                                       // 1
	tx.asst("a1", "u1", "m1", toolUse("t1"))                                                                                                                                                         // 2
	tx.asst("a2", "a1", "m1", toolUse("t2"))                                                                                                                                                         // 3
	tx.asst("a3", "a2", "m1", toolUse("t3"))                                                                                                                                                         // 4: off the walk
	tx.add(`{"parentUuid":"a1","type":"user","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":"one"},{"type":"text","text":"typed meanwhile"}]},"uuid":"r1"}`) // 5
	tx.result("r3", "a3", "t3")                                                                                                                                                                      // 6: off the walk
	tx.result("r2", "a2", "t2")                                                                                                                                                                      // 7
	tx.asst("a4", "r2", "m2", text("done"))                                                                                                                                                          // 8
	ix := tx.index(t)
	c := ix.ActiveChain()
	for _, line := range []int{4, 5, 6} {
		if !c.Reached(line - 1) {
			t.Errorf("line %d is not on the chain or attached", line)
		}
	}
	msgs := ix.Messages(c)
	if len(msgs) != 4 {
		t.Fatalf("%d messages, want user, assistant, user, assistant", len(msgs))
	}
	var uses, after []string
	for _, r := range msgs[1].Blocks {
		uses = append(uses, ix.block(r).ID)
	}
	for _, r := range msgs[2].Blocks {
		b := ix.block(r)
		switch b.Type {
		case BlockToolResult:
			after = append(after, "result "+b.ID)
		case BlockText:
			after = append(after, "text")
		default:
			after = append(after, "other")
		}
	}
	if len(uses) != 3 {
		t.Errorf("assistant message holds calls %v, want t1, t2, t3", uses)
	}
	if len(after) != 4 || after[3] != "text" {
		t.Errorf("user message after the calls holds %v, want three results then the text", after)
	}
	wantCodes(t, codes(Check(ix, CheckOptions{}), Error))
	wantCodes(t, codes(Check(ix, CheckOptions{}), Warning))
}

// TestCorpusForkResumesWhole: corpus file 2956cee6 has both shapes; the
// real client sent every one of its 161 user and assistant records but the
// 3 whose only text is whitespace (history 158/161, 3 empty). check finds nothing wrong, and the chain
// reaches lines 56 (result + user text), 138 (an off-walk tool_use line of
// a split message) and 142 (its result).
func TestCorpusForkResumesWhole(t *testing.T) {
	ix := indexCorpus(t, "projects/-Users-alex-workspace-cli--worktrees-2/2956cee6-6153-4ba6-ba24-3b7f3257549c.jsonl")
	c := ix.ActiveChain()
	if n := Errors(Check(ix, CheckOptions{})); n != 0 {
		t.Errorf("check: %d errors", n)
	}
	reached := map[int]bool{}
	for i := range ix.Len() {
		if c.Reached(i) {
			reached[int(ix.Rec(i).Line)] = true
		}
	}
	for _, line := range []int{56, 138, 142} {
		if !reached[line] {
			t.Errorf("line %d is not on the active chain", line)
		}
	}
	conv, on := 0, 0
	for i := range ix.Len() {
		if ix.Rec(i).IsConversation() {
			conv++
			if c.Reached(i) {
				on++
			}
		}
	}
	if conv != 161 || on != conv {
		t.Errorf("%d of %d user and assistant records on the chain; the client sent all 161 (3 of them empty)", on, conv)
	}
}
