package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"

	"ccm/internal/objstore"
)

// maxHelpers bounds the helper processes of one Client.
const maxHelpers = 4

// Client is an objstore.Store whose requests run in helper processes. It
// is safe for concurrent use.
type Client struct {
	helper   string
	cfg      objstore.Config
	slots    chan struct{}
	mu       sync.Mutex
	idle     []*proc
	endpoint string
}

// proc is one running helper.
type proc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	enc   *json.Encoder
	dec   *json.Decoder
}

// New makes a client of the helper program at helper, for the server
// cfg names; no helper starts until the first request.
func New(helper string, cfg objstore.Config) *Client {
	c := &Client{helper: helper, cfg: cfg, slots: make(chan struct{}, maxHelpers), endpoint: cfg.Endpoint}
	if c.endpoint == "" {
		c.endpoint = "AWS S3 (" + cfg.Region + ")"
	}
	return c
}

func (c *Client) start() (*proc, error) {
	cmd := exec.Command(c.helper)
	cmd.Stderr = os.Stderr
	stopWithParent(cmd)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", HelperName, err)
	}
	p := &proc{cmd: cmd, stdin: in, enc: json.NewEncoder(in), dec: json.NewDecoder(out)}
	if err := p.enc.Encode(c.cfg); err != nil {
		p.kill()
		return nil, fmt.Errorf("%s: %w", HelperName, err)
	}
	return p, nil
}

func (p *proc) kill() {
	p.stdin.Close()
	if p.cmd.Process != nil {
		p.cmd.Process.Kill()
	}
	p.cmd.Wait()
}

// call sends r to an idle helper (started if none is) and waits for its
// answer; a cancelled context kills that helper.
func (c *Client) call(ctx context.Context, r request) (*response, error) {
	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-c.slots }()
	c.mu.Lock()
	var p *proc
	if n := len(c.idle); n > 0 {
		p, c.idle = c.idle[n-1], c.idle[:n-1]
	}
	c.mu.Unlock()
	if p == nil {
		var err error
		if p, err = c.start(); err != nil {
			return nil, err
		}
	}
	done := make(chan error, 1)
	var resp response
	go func() {
		if err := p.enc.Encode(r); err != nil {
			done <- err
			return
		}
		done <- p.dec.Decode(&resp)
	}()
	select {
	case err := <-done:
		if err != nil {
			p.kill()
			return nil, fmt.Errorf("%s stopped: %v", HelperName, err)
		}
	case <-ctx.Done():
		p.kill()
		<-done
		return nil, ctx.Err()
	}
	c.mu.Lock()
	c.idle = append(c.idle, p)
	c.mu.Unlock()
	switch {
	case resp.Error != nil:
		if resp.Error.Cause != "" {
			resp.Error.Err = errors.New(resp.Error.Cause)
		}
		return nil, resp.Error
	case resp.Fail != "":
		return nil, errors.New(resp.Fail)
	}
	return &resp, nil
}

// PutFile implements objstore.Store.
func (c *Client) PutFile(ctx context.Context, bucket, key, path string, size int64, sum []byte) error {
	_, err := c.call(ctx, request{Op: "putfile", Bucket: bucket, Key: key, Path: path, Size: size, Sum: sum})
	return err
}

// PutBytes implements objstore.Store.
func (c *Client) PutBytes(ctx context.Context, bucket, key string, data []byte) error {
	_, err := c.call(ctx, request{Op: "putbytes", Bucket: bucket, Key: key, Data: data})
	return err
}

// GetFile implements objstore.Store. A helper that does not say what it
// wrote (one older than ccm) fails it: the download would go unchecked.
func (c *Client) GetFile(ctx context.Context, bucket, key, path string) (objstore.Written, error) {
	r, err := c.call(ctx, request{Op: "getfile", Bucket: bucket, Key: key, Path: path})
	if err != nil {
		return objstore.Written{}, err
	}
	if r.Written == nil || len(r.Written.SHA256) != 64 {
		os.Remove(path)
		return objstore.Written{}, fmt.Errorf("%s did not hash the download: it is older than ccm (install both from one release or one source tree)", c.helper)
	}
	return *r.Written, nil
}

// GetBytes implements objstore.Store.
func (c *Client) GetBytes(ctx context.Context, bucket, key string, max int64) ([]byte, error) {
	r, err := c.call(ctx, request{Op: "getbytes", Bucket: bucket, Key: key, Max: max})
	if err != nil {
		return nil, err
	}
	return r.Data, nil
}

// Head implements objstore.Store.
func (c *Client) Head(ctx context.Context, bucket, key string) (objstore.Info, error) {
	r, err := c.call(ctx, request{Op: "head", Bucket: bucket, Key: key})
	if err != nil {
		return objstore.Info{}, err
	}
	return r.Info, nil
}

// Delete implements objstore.Store.
func (c *Client) Delete(ctx context.Context, bucket, key string) error {
	_, err := c.call(ctx, request{Op: "delete", Bucket: bucket, Key: key})
	return err
}

// List implements objstore.Store.
func (c *Client) List(ctx context.Context, bucket, prefix string, fn func(objstore.Info) error) error {
	r, err := c.call(ctx, request{Op: "list", Bucket: bucket, Prefix: prefix})
	if err != nil {
		return err
	}
	for _, i := range r.List {
		if err := fn(i); err != nil {
			return err
		}
	}
	return nil
}

// AbortIncomplete implements objstore.Store.
func (c *Client) AbortIncomplete(ctx context.Context, bucket, key string) error {
	_, err := c.call(ctx, request{Op: "abort", Bucket: bucket, Key: key})
	return err
}

// Probe implements objstore.Store.
func (c *Client) Probe(ctx context.Context, bucket, prefix string) error {
	_, err := c.call(ctx, request{Op: "probe", Bucket: bucket, Prefix: prefix})
	return err
}

// Endpoint implements objstore.Store.
func (c *Client) Endpoint() string { return c.endpoint }

// Close stops the helpers.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.idle {
		p.stdin.Close()
		p.cmd.Wait()
	}
	c.idle = nil
	return nil
}
