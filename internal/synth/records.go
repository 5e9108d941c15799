package synth

import "strconv"

// This file writes the records around the conversation proper: checkpoints
// (file-history-snapshot), slash commands (system/local_command), queued
// input (queue-operation), compactions, the Stop hook's records, progress
// records, and the session summary.

// snapshot writes a file-history-snapshot for the prompt with uuid promptU.
func (g *gen) snapshot(promptU uid, ti int) {
	b := append(g.rec[:0], `{"type":"file-history-snapshot","messageId":"`...)
	b = append(b, promptU[:]...)
	b = append(b, `","snapshot":{"messageId":"`...)
	b = append(b, promptU[:]...)
	b = append(b, `","trackedFileBackups":{`...)
	for i := 0; i < min(ti/10, 4); i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `"internal/`...)
		b = append(b, words[20+i]...)
		b = append(b, `.go":{"backupFileName":"`...)
		b = appendID(b, g.r, "", 16)
		b = append(b, `@v`...)
		b = strconv.AppendInt(b, int64(ti/10), 10)
		b = append(b, `","version":`...)
		b = strconv.AppendInt(b, int64(ti/10), 10)
		b = append(b, `,"backupTime":`...)
		b = appendTime(b, g.now-5000)
		b = append(b, '}')
	}
	b = append(b, `},"timestamp":`...)
	b = appendTime(b, g.now)
	b = append(b, `},"isSnapshotUpdate":false}`...)
	g.emit(b, "file-history-snapshot", "")
}

// system writes a chained system record of subtype sub; body holds the
// fields between subtype and timestamp (starting with a comma) and tail the
// fields after uuid.
func (g *gen) system(sub, subKey, body, tail string) uid {
	u := newUUID(g.r)
	g.tick(20, 300)
	b := g.begin(g.tipRef())
	b = append(b, `,"type":"system","subtype":"`...)
	b = append(b, sub...)
	b = append(b, '"')
	b = append(b, body...)
	b = g.appendTimeUUID(b, u)
	b = append(b, tail...)
	b = append(b, '}')
	g.emit(b, "system", subKey)
	g.setTip(u)
	return u
}

// localCommand writes the two system records a /model command leaves.
func (g *gen) localCommand() {
	g.system("local_command", "system/local_command",
		`,"content":"<command-name>/model</command-name>\n            <command-message>model</command-message>\n            <command-args></command-args>","level":"info"`,
		`,"isMeta":false`)
	g.system("local_command", "system/local_command",
		`,"content":"<local-command-stdout>Set model to \u001b[1mopus (claude-opus-4-5)\u001b[22m</local-command-stdout>","level":"info"`,
		`,"isMeta":false`)
}

// queueOp renders a queue-operation record (no uuid) into g.rec's storage.
func (g *gen) queueOp(op string) []byte {
	b := append(g.rec[:0], `{"type":"queue-operation","operation":"`...)
	b = append(b, op...)
	b = append(b, `","timestamp":`...)
	b = appendTime(b, g.now)
	b = append(b, `,"sessionId":`...)
	b = appendString(b, g.o.SessionID)
	if op == "enqueue" {
		b = append(b, `,"content":`...)
		g.raw2 = appendWords(g.raw2[:0], g.r, between(g.r, 4, 20))
		b = appendString(b, g.raw2)
	}
	return append(b, '}')
}

// queueOps writes a typed-ahead message being queued and taken.
func (g *gen) queueOps() {
	g.emit(g.queueOp("enqueue"), "queue-operation", "")
	g.tick(500, 3000)
	g.emit(g.queueOp("dequeue"), "queue-operation", "")
}

// compact writes a compaction: a compact_boundary root whose
// logicalParentUuid is the old tip, then the isCompactSummary user record.
func (g *gen) compact() {
	u := newUUID(g.r)
	g.tick(2000, 20000)
	b := append(g.rec[:0], `{"parentUuid":null,"logicalParentUuid":`...)
	b = appendParent(b, g.tipRef())
	b = append(b, g.env...)
	b = append(b, `,"type":"system","subtype":"compact_boundary","content":"Conversation compacted","isMeta":false`...)
	b = g.appendTimeUUID(b, u)
	b = append(b, `,"level":"info","compactMetadata":{"trigger":"auto","preTokens":`...)
	b = strconv.AppendInt(b, int64(between(g.r, 150000, 190000)), 10)
	b = append(b, `}}`...)
	g.emit(b, "system", "system/compact_boundary")

	s := newUUID(g.r)
	t := append(g.raw[:0], "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\nAnalysis:\n"...)
	t = appendOutput(t, g.r, styleDoc, between(g.r, 2000, 8000))
	g.raw = t
	b = g.begin(&u)
	b = append(b, `,"type":"user","message":{"role":"user","content":`...)
	b = appendString(b, t)
	b = append(b, '}')
	b = append(b, `,"isVisibleInTranscriptOnly":true,"isCompactSummary":true`...)
	b = g.appendTail(b, s)
	b = append(b, '}')
	g.emit(b, "user", "user/compact_summary")
	g.setTip(s)
	g.chainPrompts = 0
	g.m.Compactions++
}

// progress writes a chained progress record (parent under the tip when
// onChain, else under parent) with the rendered data object.
func (g *gen) progress(data []byte, sub string, c *call, toolUseID string, parent *uid, onChain bool) {
	u := newUUID(g.r)
	g.tick(1, 200)
	if onChain {
		parent = g.tipRef()
	}
	b := g.begin(parent)
	b = append(b, `,"type":"progress","data":`...)
	b = append(b, data...)
	b = append(b, `,"toolUseID":"`...)
	b = append(b, toolUseID...)
	b = append(b, `","parentToolUseID":"`...)
	b = append(b, c.id...)
	b = append(b, '"')
	b = g.appendTimeUUID(b, u)
	b = append(b, '}')
	g.emit(b, "progress", sub)
	if onChain {
		g.setTip(u)
	}
}

// hookProgress writes the hook_progress record of c's PreToolUse hook run
// on the chain.
func (g *gen) hookProgress(c *call) {
	g.progress(g.preHookData(c), "progress/hook_progress", c, c.id, nil, true)
}

// preHookData renders the data of c's PreToolUse hook_progress into g.esc2.
func (g *gen) preHookData(c *call) []byte {
	d := append(g.esc2[:0], `{"type":"hook_progress","hookEvent":"PreToolUse","hookName":"PreToolUse:`...)
	d = append(d, toolNames[c.tool]...)
	d = append(d, `","command":"${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh"}`...)
	g.esc2 = d
	return d
}

// postProgress writes the PostToolUse hook_progress after the result u of
// c: on the chain for the chain-continuing result, else hanging off u.
func (g *gen) postProgress(c *call, u uid, onChain bool) {
	d := append(g.esc2[:0], `{"type":"hook_progress","hookEvent":"PostToolUse","hookName":"PostToolUse:`...)
	d = append(d, toolNames[c.tool]...)
	d = append(d, `","command":"${CLAUDE_PLUGIN_ROOT}/scripts/post-tool-capture.sh"}`...)
	g.esc2 = d
	g.progress(d, "progress/hook_progress", c, c.id, &u, onChain)
}

// bashProgress writes bash_progress records of a long-running command.
func (g *gen) bashProgress(c *call) {
	for i, n := 0, between(g.r, 1, 3); i < n; i++ {
		g.raw2 = appendOutput(g.raw2[:0], g.r, styleLog, between(g.r, 100, 1500))
		d := append(g.esc2[:0], `{"type":"bash_progress","output":`...)
		d = appendString(d, g.raw2[:cutUTF8(g.raw2, 200)])
		d = append(d, `,"fullOutput":`...)
		d = appendString(d, g.raw2)
		d = append(d, `,"elapsedTimeSeconds":`...)
		d = strconv.AppendInt(d, int64(3*(i+1)), 10)
		d = append(d, `,"totalLines":`...)
		d = strconv.AppendInt(d, int64(countLines(g.raw2)), 10)
		d = append(d, '}')
		g.esc2 = d
		g.progress(d, "progress/bash_progress", c, "bash-progress-"+strconv.Itoa(i), nil, true)
	}
}

// agentProgress writes the agent_progress record of a Task call.
func (g *gen) agentProgress(c *call) {
	g.callExtras(c, g.callRand(c)) // the Task prompt, into raw2
	d := append(g.esc2[:0], `{"message":{"type":"user","message":{"role":"user","content":[{"type":"text","text":`...)
	d = appendString(d, g.raw2)
	d = append(d, `}]},"uuid":"`...)
	u := newUUID(g.r)
	d = append(d, u[:]...)
	d = append(d, `","timestamp":`...)
	d = appendTime(d, g.now)
	d = append(d, `},"normalizedMessages":[],"type":"agent_progress","prompt":`...)
	d = appendString(d, g.raw2)
	d = append(d, `,"agentId":"`...)
	d = append(d, c.agentID...)
	d = append(d, `"}`...)
	g.esc2 = d
	g.progress(d, "progress/agent_progress", c, "agent_"+c.id, nil, true)
}

// endOfTurn writes the Stop hook's records (with Progress) and, for 2.1.x,
// turn_duration and the last-prompt metadata record.
func (g *gen) endOfTurn(turnStart int64) {
	if g.o.Progress {
		g.stopSummary(newUUID(g.r))
	}
	if g.o.sourceTool() {
		g.system("turn_duration", "system/turn_duration",
			`,"durationMs":`+strconv.FormatInt(g.now-turnStart, 10), `,"isMeta":false`)
	}
}

// stopSummaryBody is the body of a stop_hook_summary record, between its
// subtype and its timestamp.
const stopSummaryBody = `"hookCount":1,"hookInfos":[{"command":"${CLAUDE_PLUGIN_ROOT}/hooks/stop-hook.sh"}],"hookErrors":[],"preventedContinuation":false,"stopReason":"","hasOutput":false,"level":"suggestion"`

// stopSummary writes the Stop hook's chained stop_hook_summary record for
// the hook run hook and returns its uuid.
func (g *gen) stopSummary(hook uid) uid {
	return g.system("stop_hook_summary", "system/stop_hook_summary", ","+stopSummaryBody,
		`,"toolUseID":"`+hook.String()+`"`)
}

// summary writes the session title record pointing at the leaf.
func (g *gen) summary() {
	if !g.hasTip {
		return
	}
	b := append(g.rec[:0], `{"type":"summary","summary":`...)
	g.raw2 = appendWords(g.raw2[:0], g.r, between(g.r, 3, 8))
	b = appendString(b, g.raw2)
	b = append(b, `,"leafUuid":"`...)
	b = append(b, g.tip[:]...)
	b = append(b, `"}`...)
	g.emit(b, "summary", "")
}
