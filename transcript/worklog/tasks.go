// Tasks: this file keeps the session's task list as the worklog reads it:
// tasks created and updated by TaskCreate/TaskUpdate and TodoWrite, the
// notes each gathers, the ones gone cold, and the open ones listed.

package worklog

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

func (f *Facts) createTask(id, subject string) {
	t, ok := f.Tasks[id]
	if !ok {
		t = &Task{ID: id}
		f.Tasks[id] = t
		f.TaskOrder = append(f.TaskOrder, id)
	}
	t.Subject, t.Status, t.StartTurn, t.LastMention = subject, "pending", f.Turns, f.Turns
	f.lowSubject[id] = strings.ToLower(subject)
}

// MaxTodoTasks bounds the TodoWrite items followed as tasks.
const MaxTodoTasks = 200

// trackTodo follows a TodoWrite item as a task: created when first seen,
// completed when a list first marks it so.
func (f *Facts) trackTodo(td Todo) {
	if td.Content == "" {
		return
	}
	sum := sha256.Sum256([]byte(td.Content))
	id := "todo-" + hex.EncodeToString(sum[:4])
	t, ok := f.Tasks[id]
	if !ok {
		if len(f.TodoOrder) >= MaxTodoTasks {
			return
		}
		t = &Task{ID: id, Subject: td.Content, Todo: true, StartTurn: f.Turns, LastMention: f.Turns}
		f.Tasks[id] = t
		f.TodoOrder = append(f.TodoOrder, id)
		f.lowSubject[id] = strings.ToLower(td.Content)
	}
	if td.Status != "" && td.Status != t.Status {
		t.Status = td.Status
		t.LastMention = f.Turns
		if td.Status == "completed" {
			t.EndTurn = f.Turns
		} else {
			t.EndTurn = 0
		}
	}
}

// taskNote applies fn to every task open now (created, not completed) and
// every TodoWrite item in progress.
func (f *Facts) taskNote(fn func(*Task)) {
	if f.NoTaskDetail {
		return
	}
	for _, id := range f.TaskOrder {
		if t := f.Tasks[id]; t.Status != "completed" && t.Status != "deleted" {
			fn(t)
		}
	}
	for _, id := range f.TodoOrder {
		if t := f.Tasks[id]; t.Status == "in_progress" {
			fn(t)
		}
	}
}

// ColdTasks returns the completed tasks (TaskCreate tasks and TodoWrite
// items) that were completed at least idle assistant turns ago and not
// mentioned since (by subject, or a TaskUpdate naming their id), oldest
// first.
func (f *Facts) ColdTasks(idle int) []*Task {
	var out []*Task
	for _, id := range append(append([]string{}, f.TaskOrder...), f.TodoOrder...) {
		t := f.Tasks[id]
		if t.Status == "completed" && t.EndTurn > 0 && f.Turns-t.EndTurn >= idle && f.Turns-t.LastMention >= idle {
			out = append(out, t)
		}
	}
	return out
}

func mergeTodos(a, b []Todo) []Todo {
	for _, t := range b {
		found := false
		for i := range a {
			if a[i].Content == t.Content {
				a[i].Status, found = t.Status, true
			}
		}
		if !found {
			a = append(a, t)
		}
	}
	return a
}

// OpenTasks lists the TodoWrite items and tasks not completed, in-progress
// first, as "[status] subject" lines.
func (f *Facts) OpenTasks() []string {
	var active, pending []string
	add := func(status, line string) {
		if status == "in_progress" {
			active = append(active, line)
		} else {
			pending = append(pending, line)
		}
	}
	for _, t := range f.Todos {
		if t.Status != "completed" {
			add(t.Status, "["+t.Status+"] "+t.Content)
		}
	}
	for _, id := range f.TaskOrder {
		t := f.Tasks[id]
		if t.Status != "completed" && t.Status != "deleted" {
			add(t.Status, "task #"+id+" ["+t.Status+"] "+t.Subject)
		}
	}
	return append(active, pending...)
}
