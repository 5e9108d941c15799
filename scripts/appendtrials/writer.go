package main

import (
	"math/rand/v2"
	"os"
	"time"
)

// writer appends a trial's lines to path.
type writer struct {
	path  string
	rng   *rand.Rand
	n     int  // lines written
	raced bool // a line went to the file the purge renamed over
}

// run appends as kind says until stop is closed (big: its appends, then
// it waits for stop). purge closes once the purge has started.
func (w *writer) run(kind string, stop, purge <-chan struct{}) error {
	switch kind {
	case "reopen":
		return w.reopen(stop, time.Millisecond, 2*time.Millisecond, -1)
	case "big":
		err := w.reopen(nil, 0, time.Millisecond, 1000)
		<-stop
		return err
	case "timed":
		return w.timed(stop)
	case "hold":
		return w.hold(stop, purge)
	}
	return nil
}

// reopen appends line after line as Claude Code does, open, write,
// close: a random pause up to pause between the open and the write, and a
// gap between lines (random up to gap with a pause, else gap), until stop
// (nil: never) or limit lines (limit < 0: no limit).
func (w *writer) reopen(stop <-chan struct{}, pause, gap time.Duration, limit int) error {
	for w.n != limit {
		select {
		case <-stop:
			return nil
		default:
		}
		f, err := os.OpenFile(w.path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return err
		}
		if pause > 0 {
			time.Sleep(time.Duration(w.rng.Int64N(int64(pause))))
		}
		if err := w.write(f); err != nil {
			return err
		}
		if pause > 0 {
			time.Sleep(time.Duration(w.rng.Int64N(int64(gap))))
		} else {
			time.Sleep(gap)
		}
	}
	return nil
}

// timed opens and closes the file in a loop until the file it opened is
// no longer the one at the path, that is, until it holds the file the
// purge renamed over: it writes a line to it, and the next line to the
// file now at the path.
func (w *writer) timed(stop <-chan struct{}) error {
	for {
		select {
		case <-stop:
			return nil
		default:
		}
		f, err := os.OpenFile(w.path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return err
		}
		held, err1 := f.Stat()
		now, err2 := os.Stat(w.path)
		if err1 != nil || err2 != nil || os.SameFile(held, now) {
			f.Close()
			continue
		}
		w.raced = true
		if err := w.write(f); err != nil {
			return err
		}
		g, err := os.OpenFile(w.path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return err
		}
		return w.write(g)
	}
}

// hold opens the file once, at a random moment of the purge's first
// 400 ms, and writes a line through that descriptor every millisecond
// until stop.
func (w *writer) hold(stop, purge <-chan struct{}) error {
	<-purge
	time.Sleep(time.Duration(w.rng.Int64N(int64(400 * time.Millisecond))))
	f, err := os.OpenFile(w.path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	for {
		select {
		case <-stop:
			return nil
		default:
		}
		if _, err := f.WriteString(line(w.n)); err != nil {
			return err
		}
		w.n++
		time.Sleep(time.Millisecond)
	}
}

// write writes the next line to f and closes it.
func (w *writer) write(f *os.File) error {
	_, err := f.WriteString(line(w.n))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		w.n++
	}
	return err
}
