// Package agent runs object storage requests in a helper process,
// ccm-s3, so that ccm never links the TLS and HTTP stack: Go runs every
// linked package's initialisation at every start, and ccm's hooks start
// on every tool call (crypto/tls and net/http made the idle hook 0.35 ms,
// about 13%, slower; scripts/bench-remote.sh). The helper links them and
// does nothing else.
//
// The protocol is JSON values on the helper's stdin and stdout: first the
// objstore.Config, then one request and one response at a time. Files
// travel by path (the helper reads and writes them itself, same machine;
// a download's answer carries the size and SHA-256 of what it wrote),
// small objects inline. A Client keeps up to four helpers, one request
// each at a time; cancelling a request kills its helper.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"ccm/internal/objstore"
)

// HelperName is the helper program's name.
const HelperName = "ccm-s3"

// ErrNoHelper means the helper program is not installed.
var ErrNoHelper = errors.New("object storage needs the " + HelperName + " program beside ccm or on PATH (the " + HelperName + " of a release, or go install ./cmd/" + HelperName + " in ccm's source): it is kept apart so that ccm's hooks start without the TLS stack")

// Find locates the helper: $CCM_S3_HELPER, else beside the running
// program, else on PATH.
func Find() (string, error) {
	if p := os.Getenv("CCM_S3_HELPER"); p != "" {
		return p, nil
	}
	name := HelperName
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", ErrNoHelper
}

// request is one call, as the helper reads it.
type request struct {
	Op     string `json:"op"`
	Bucket string `json:"bucket"`
	Key    string `json:"key,omitempty"`
	Prefix string `json:"prefix,omitempty"`
	Path   string `json:"path,omitempty"`
	Size   int64  `json:"size,omitempty"`
	Sum    []byte `json:"sum,omitempty"`
	Data   []byte `json:"data,omitempty"`
	Max    int64  `json:"max,omitempty"`
}

// response is its answer: what was asked for, or the error.
type response struct {
	Info    objstore.Info     `json:"info"`
	Written *objstore.Written `json:"written,omitempty"` // getfile
	Data    []byte            `json:"data,omitempty"`
	List    []objstore.Info   `json:"list,omitempty"`
	Error   *objstore.Error   `json:"error,omitempty"` // the server's refusal, or the server not reached
	Fail    string            `json:"fail,omitempty"`  // any other error
}

// Serve answers requests read from in on out until in ends: the helper's
// main loop. open makes the store from the configuration read first.
//
// The helper never outlives its caller's intent: ccm sends a request only
// after the answer to the last one, so the end of in while a request runs
// means ccm is gone (killed, or interrupted); the request is cancelled
// then, and the helper exits, so that no upload of a run that was stopped
// completes after a later run's.
func Serve(in io.Reader, out io.Writer, open func(objstore.Config) (objstore.Store, error)) error {
	dec, enc := json.NewDecoder(in), json.NewEncoder(out)
	var cfg objstore.Config
	if err := dec.Decode(&cfg); err != nil {
		return fmt.Errorf("no configuration on stdin: %v (it is ccm's helper, not run by hand)", err)
	}
	st, err := open(cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reqs := make(chan request)
	ended := make(chan error, 1)
	go func() {
		for {
			var r request
			if err := dec.Decode(&r); err != nil {
				if err == io.EOF {
					err = nil
				}
				ended <- err
				cancel()
				return
			}
			reqs <- r
		}
	}()
	for {
		select {
		case r := <-reqs:
			resp := handle(ctx, st, r)
			if ctx.Err() != nil {
				return <-ended
			}
			if err := enc.Encode(resp); err != nil {
				return err
			}
		case err := <-ended:
			return err
		}
	}
}

func handle(ctx context.Context, st objstore.Store, r request) (resp response) {
	var err error
	switch r.Op {
	case "putfile":
		err = st.PutFile(ctx, r.Bucket, r.Key, r.Path, r.Size, r.Sum)
	case "putbytes":
		err = st.PutBytes(ctx, r.Bucket, r.Key, r.Data)
	case "getfile":
		var w objstore.Written
		if w, err = st.GetFile(ctx, r.Bucket, r.Key, r.Path); err == nil {
			resp.Written = &w
		}
	case "getbytes":
		resp.Data, err = st.GetBytes(ctx, r.Bucket, r.Key, r.Max)
	case "head":
		resp.Info, err = st.Head(ctx, r.Bucket, r.Key)
	case "delete":
		err = st.Delete(ctx, r.Bucket, r.Key)
	case "list":
		resp.List = []objstore.Info{}
		err = st.List(ctx, r.Bucket, r.Prefix, func(i objstore.Info) error {
			resp.List = append(resp.List, i)
			return nil
		})
	case "abort":
		err = st.AbortIncomplete(ctx, r.Bucket, r.Key)
	case "probe":
		err = st.Probe(ctx, r.Bucket, r.Prefix)
	case "endpoint":
		resp.Data = []byte(st.Endpoint())
	default:
		err = fmt.Errorf("unknown request %q", r.Op)
	}
	var oe *objstore.Error
	switch {
	case err == nil:
	case errors.As(err, &oe):
		if oe.Err != nil {
			oe.Cause = oe.Err.Error()
		}
		resp.Error = oe
	default:
		resp.Fail = err.Error()
	}
	return resp
}
