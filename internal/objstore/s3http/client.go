package s3http

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"ccm/internal/objstore"
)

// Client is a connection to one S3-compatible server. It is safe for
// concurrent use.
type Client struct {
	cfg      objstore.Config
	base     *url.URL // the endpoint; nil for AWS S3
	http     *http.Client
	mu       sync.Mutex
	regions  map[string]string // bucket -> region, learnt from redirects
	attempts int
	now      func() time.Time
}

// New makes a client; it does not connect.
func New(cfg objstore.Config) (*Client, error) {
	if cfg.AccessKey == "" || cfg.SecretKey == "" {
		return nil, objstore.ErrNoCredentials
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	if cfg.Stall <= 0 {
		cfg.Stall = time.Minute
	}
	if cfg.PartSize <= 0 {
		cfg.PartSize = 64 << 20
	}
	c := &Client{cfg: cfg, regions: map[string]string{}, attempts: 3, now: time.Now}
	if cfg.Endpoint != "" {
		if err := objstore.CheckEndpoint(cfg.Endpoint); err != nil {
			return nil, err
		}
		c.base, _ = url.Parse(strings.TrimSuffix(cfg.Endpoint, "/"))
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.ResponseHeaderTimeout = cfg.Stall
	tr.DialContext = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	c.http = &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return c, nil
}

// Endpoint names the server, for messages.
func (c *Client) Endpoint() string {
	if c.base != nil {
		return c.base.String()
	}
	return "AWS S3 (" + c.cfg.Region + ")"
}

// request is one S3 call.
type request struct {
	op      string
	method  string
	bucket  string
	key     string
	query   url.Values
	header  http.Header
	body    func() io.Reader // called once per attempt; nil for none
	size    int64
	payload string // hex SHA-256 of the body
}

// do sends r, retrying transport failures and 5xx answers (every request
// is idempotent), and returns the response for a 2xx answer; anything
// else is an *Error. The caller closes the body. A request that moves no
// byte for Config.Stall is cancelled.
func (c *Client) do(ctx context.Context, r request) (*http.Response, error) {
	if r.payload == "" {
		r.payload = emptySHA256
	}
	var last error
	redirected := false
	for attempt := 0; attempt < c.attempts; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Duration(250<<attempt) * time.Millisecond):
			}
		}
		resp, err := c.once(ctx, r)
		if err == nil {
			return resp, nil
		}
		last = err
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var e *objstore.Error
		if errors.As(err, &e) {
			if e.Code == "regionRedirect" && !redirected {
				redirected = true
				attempt--
				continue
			}
			if e.Status != 0 && e.Status < 500 && e.Status != http.StatusTooManyRequests {
				return nil, err
			}
		}
	}
	return nil, last
}

// once sends r one time.
func (c *Client) once(ctx context.Context, r request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(ctx)
	w := &watch{cancel: cancel}
	w.touch()
	stop := w.start(c.cfg.Stall)
	region := c.region(r.bucket)
	u := c.objectURL(r.bucket, r.key, region)
	u.RawQuery = strings.ReplaceAll(r.query.Encode(), "+", "%20")
	var body io.Reader
	if r.body != nil {
		body = &progressReader{r: r.body(), w: w}
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u.String(), body)
	if err != nil {
		stop()
		cancel()
		return nil, err
	}
	if r.body != nil {
		req.ContentLength = r.size
		if r.size == 0 {
			req.Body = http.NoBody
		}
	}
	for k, vs := range r.header {
		req.Header[k] = append([]string(nil), vs...)
	}
	sign(req, &c.cfg, region, r.payload, c.now())
	resp, err := c.http.Do(req)
	if err != nil {
		stop()
		cancel()
		if w.stalled.Load() {
			err = fmt.Errorf("no progress for %s: the server stopped answering", c.cfg.Stall)
		}
		return nil, &objstore.Error{Op: r.op, URL: c.url(r.bucket, r.key), Err: cleanNetErr(err), Server: c.Endpoint()}
	}
	if resp.StatusCode/100 == 2 {
		resp.Body = &watchedBody{ReadCloser: resp.Body, w: w, stop: stop, cancel: cancel}
		return resp, nil
	}
	defer func() { stop(); cancel() }()
	defer resp.Body.Close()
	e := &objstore.Error{Op: r.op, URL: c.url(r.bucket, r.key), Status: resp.StatusCode}
	var x struct {
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
		Region  string `xml:"Region"`
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if xml.Unmarshal(data, &x) == nil {
		e.Code, e.Message = x.Code, x.Message
	}
	if e.Code == "" && resp.StatusCode == http.StatusNotFound && r.method == http.MethodHead {
		e.Code = "NotFound"
	}
	// AWS answers a request to the wrong region with the right one.
	if br := cmpOr(resp.Header.Get("X-Amz-Bucket-Region"), x.Region); br != "" && br != region && c.base == nil {
		c.mu.Lock()
		c.regions[r.bucket] = br
		c.mu.Unlock()
		e.Code = "regionRedirect"
	}
	return nil, e
}

// cleanNetErr drops the method and URL Go's client puts before a
// transport error: the Error names the object already.
func cleanNetErr(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func (c *Client) region(bucket string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r := c.regions[bucket]; r != "" {
		return r
	}
	return c.cfg.Region
}

// objectURL addresses bucket/key: path-style on a configured endpoint
// (what MinIO and most other servers expect), virtual-hosted on AWS
// unless the bucket name has a dot (its certificate would not match).
func (c *Client) objectURL(bucket, key, region string) *url.URL {
	var u url.URL
	p := "/" + bucket
	if key != "" {
		p += "/" + key
	}
	switch {
	case c.base != nil:
		u = *c.base
	case strings.Contains(bucket, "."):
		u = url.URL{Scheme: "https", Host: "s3." + region + ".amazonaws.com"}
	default:
		u = url.URL{Scheme: "https", Host: bucket + ".s3." + region + ".amazonaws.com"}
		p = "/" + key
	}
	u.Path = p
	u.RawPath = escape(p, false)
	return &u
}

func (c *Client) url(bucket, key string) string {
	if key == "" {
		return objstore.Scheme + bucket
	}
	return objstore.Scheme + bucket + "/" + key
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// watch cancels a request that moves no byte for a while.
type watch struct {
	last    atomic.Int64
	stalled atomic.Bool
	cancel  func()
}

func (w *watch) touch() { w.last.Store(time.Now().UnixNano()) }

func (w *watch) start(limit time.Duration) (stop func()) {
	done := make(chan struct{})
	var once sync.Once
	go func() {
		tick := time.NewTicker(min(limit/4, time.Second))
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if time.Since(time.Unix(0, w.last.Load())) > limit {
					w.stalled.Store(true)
					w.cancel()
					return
				}
			}
		}
	}()
	return func() { once.Do(func() { close(done) }) }
}

type progressReader struct {
	r io.Reader
	w *watch
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.w.touch()
	}
	return n, err
}

// watchedBody is a response body under the stall watch; Close ends it.
type watchedBody struct {
	io.ReadCloser
	w      *watch
	stop   func()
	cancel func()
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.w.touch()
	}
	if err != nil && err != io.EOF && b.w.stalled.Load() {
		err = errors.New("no progress: the server stopped sending")
	}
	return n, err
}

func (b *watchedBody) Close() error {
	err := b.ReadCloser.Close()
	b.stop()
	b.cancel()
	return err
}
