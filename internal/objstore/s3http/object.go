package s3http

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"ccm/internal/objstore"
)

// Put uploads size bytes of r (from offset 0; read again when a part or
// an attempt is retried) as bucket/key, replacing any object there. sum is
// the bytes' SHA-256 (nil: computed here, one more read). Every request
// is signed with the SHA-256 of the bytes it carries, which the server
// checks before storing them; an object up to Config.PartSize is one
// request, a larger one a multipart upload of such parts. When Put
// returns nil the server holds exactly those bytes under key; it checks
// the size it reports too.
func (c *Client) Put(ctx context.Context, bucket, key string, r io.ReaderAt, size int64, sum []byte) error {
	if size > c.cfg.PartSize {
		if err := c.putMultipart(ctx, bucket, key, r, size); err != nil {
			return err
		}
	} else {
		if sum == nil {
			var err error
			if sum, err = sha256Of(io.NewSectionReader(r, 0, size)); err != nil {
				return err
			}
		}
		resp, err := c.do(ctx, request{op: "upload", method: http.MethodPut, bucket: bucket, key: key,
			header: http.Header{"Content-Type": {"application/octet-stream"}},
			body:   func() io.Reader { return io.NewSectionReader(r, 0, size) }, size: size, payload: hex.EncodeToString(sum)})
		if err != nil {
			return err
		}
		drain(resp)
	}
	info, err := c.Head(ctx, bucket, key)
	if err != nil {
		return err
	}
	if info.Size != size {
		return &objstore.Error{Op: "upload", URL: c.url(bucket, key), Err: fmt.Errorf("the server holds %d bytes, %d were sent", info.Size, size)}
	}
	return nil
}

// PutBytes uploads data as bucket/key, as Put does.
func (c *Client) PutBytes(ctx context.Context, bucket, key string, data []byte) error {
	sum := sha256.Sum256(data)
	return c.Put(ctx, bucket, key, bytes.NewReader(data), int64(len(data)), sum[:])
}

// PutFile uploads the file at path, as Put does.
func (c *Client) PutFile(ctx context.Context, bucket, key, path string, size int64, sum []byte) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() != size {
		return fmt.Errorf("%s: %d bytes, %d expected", path, fi.Size(), size)
	}
	return c.Put(ctx, bucket, key, f, size, sum)
}

// GetFile downloads bucket/key into a new file at path, hashing the bytes
// as it writes them.
func (c *Client) GetFile(ctx context.Context, bucket, key, path string) (objstore.Written, error) {
	rc, info, err := c.Get(ctx, bucket, key)
	if err != nil {
		return objstore.Written{}, err
	}
	defer rc.Close()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return objstore.Written{}, err
	}
	h := sha256.New()
	n, err := io.CopyBuffer(io.MultiWriter(f, h), rc, make([]byte, 1<<20))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && info.Size >= 0 && n != info.Size {
		err = fmt.Errorf("got %d bytes of %d", n, info.Size)
	}
	if err != nil {
		os.Remove(path)
		return objstore.Written{}, &objstore.Error{Op: "download", URL: c.url(bucket, key), Err: err}
	}
	return objstore.Written{Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// Close releases idle connections.
func (c *Client) Close() error {
	c.http.CloseIdleConnections()
	return nil
}

func sha256Of(r io.Reader) ([]byte, error) {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}

func drain(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
}

// Get opens bucket/key for reading. The caller closes it and checks what
// it read against what it expects (the server's bytes are not signed).
func (c *Client) Get(ctx context.Context, bucket, key string) (io.ReadCloser, objstore.Info, error) {
	resp, err := c.do(ctx, request{op: "download", method: http.MethodGet, bucket: bucket, key: key})
	if err != nil {
		return nil, objstore.Info{}, err
	}
	return resp.Body, infoOf(key, resp), nil
}

// GetBytes reads a whole object of at most max bytes.
func (c *Client) GetBytes(ctx context.Context, bucket, key string, max int64) ([]byte, error) {
	rc, info, err := c.Get(ctx, bucket, key)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	if info.Size > max {
		return nil, &objstore.Error{Op: "download", URL: c.url(bucket, key), Err: fmt.Errorf("%d bytes, more than the %d expected", info.Size, max)}
	}
	data, err := io.ReadAll(io.LimitReader(rc, max+1))
	if err != nil {
		return nil, &objstore.Error{Op: "download", URL: c.url(bucket, key), Err: err}
	}
	if int64(len(data)) != info.Size && info.Size >= 0 {
		return nil, &objstore.Error{Op: "download", URL: c.url(bucket, key), Err: fmt.Errorf("got %d bytes of %d", len(data), info.Size)}
	}
	return data, nil
}

// Head describes bucket/key; IsNotFound(err) when it is not there.
func (c *Client) Head(ctx context.Context, bucket, key string) (objstore.Info, error) {
	resp, err := c.do(ctx, request{op: "stat", method: http.MethodHead, bucket: bucket, key: key})
	if err != nil {
		return objstore.Info{}, err
	}
	drain(resp)
	return infoOf(key, resp), nil
}

func infoOf(key string, resp *http.Response) objstore.Info {
	t, _ := http.ParseTime(resp.Header.Get("Last-Modified"))
	return objstore.Info{Key: key, Size: resp.ContentLength, LastModified: t, ETag: strings.Trim(resp.Header.Get("ETag"), `"`)}
}

// Delete removes bucket/key; an object that is not there is not an error.
func (c *Client) Delete(ctx context.Context, bucket, key string) error {
	resp, err := c.do(ctx, request{op: "delete", method: http.MethodDelete, bucket: bucket, key: key})
	if objstore.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	drain(resp)
	return nil
}

// List calls fn for every object whose key starts with prefix, in key
// order, a page of up to 1,000 at a time.
func (c *Client) List(ctx context.Context, bucket, prefix string, fn func(objstore.Info) error) error {
	token := ""
	for {
		q := url.Values{"list-type": {"2"}, "prefix": {prefix}}
		if token != "" {
			q.Set("continuation-token", token)
		}
		resp, err := c.do(ctx, request{op: "list", method: http.MethodGet, bucket: bucket, key: "", query: q})
		if err != nil {
			if e, ok := err.(*objstore.Error); ok {
				e.URL = c.url(bucket, prefix)
			}
			return err
		}
		var page struct {
			Truncated bool   `xml:"IsTruncated"`
			Next      string `xml:"NextContinuationToken"`
			Contents  []struct {
				Key          string `xml:"Key"`
				Size         int64  `xml:"Size"`
				LastModified string `xml:"LastModified"`
				ETag         string `xml:"ETag"`
			} `xml:"Contents"`
		}
		err = xml.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(&page)
		drain(resp)
		if err != nil {
			return &objstore.Error{Op: "list", URL: c.url(bucket, prefix), Err: fmt.Errorf("unreadable listing: %v", err)}
		}
		for _, o := range page.Contents {
			t, _ := time.Parse(time.RFC3339, o.LastModified)
			if err := fn(objstore.Info{Key: o.Key, Size: o.Size, LastModified: t, ETag: strings.Trim(o.ETag, `"`)}); err != nil {
				return err
			}
		}
		if !page.Truncated || page.Next == "" {
			return nil
		}
		token = page.Next
	}
}

// Probe lists at most one key under prefix: it fails as every request
// would (the server unreachable, the credentials refused, no such bucket)
// before any work is done for nothing.
func (c *Client) Probe(ctx context.Context, bucket, prefix string) error {
	resp, err := c.do(ctx, request{op: "list", method: http.MethodGet, bucket: bucket,
		query: url.Values{"list-type": {"2"}, "prefix": {prefix}, "max-keys": {"1"}}})
	if err != nil {
		if e, ok := err.(*objstore.Error); ok {
			e.URL = c.url(bucket, prefix)
		}
		return err
	}
	drain(resp)
	return nil
}

// putMultipart uploads r in parts of Config.PartSize, each signed with its
// SHA-256; on failure the upload is aborted so no part is left behind.
func (c *Client) putMultipart(ctx context.Context, bucket, key string, r io.ReaderAt, size int64) (err error) {
	resp, err := c.do(ctx, request{op: "upload", method: http.MethodPost, bucket: bucket, key: key,
		query: url.Values{"uploads": {""}}, header: http.Header{"Content-Type": {"application/octet-stream"}}})
	if err != nil {
		return err
	}
	var init struct {
		UploadID string `xml:"UploadId"`
	}
	err = xml.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&init)
	drain(resp)
	if err != nil || init.UploadID == "" {
		return &objstore.Error{Op: "upload", URL: c.url(bucket, key), Err: fmt.Errorf("no upload id in the answer (%v)", err)}
	}
	defer func() {
		if err != nil {
			c.abort(context.WithoutCancel(ctx), bucket, key, init.UploadID)
		}
	}()
	type part struct {
		XMLName xml.Name `xml:"Part"`
		Number  int      `xml:"PartNumber"`
		ETag    string   `xml:"ETag"`
	}
	var parts []part
	for n, off := 1, int64(0); off < size; n, off = n+1, off+c.cfg.PartSize {
		ln := min(c.cfg.PartSize, size-off)
		sum, err := sha256Of(io.NewSectionReader(r, off, ln))
		if err != nil {
			return err
		}
		o := off
		resp, err := c.do(ctx, request{op: "upload", method: http.MethodPut, bucket: bucket, key: key,
			query: url.Values{"partNumber": {strconv.Itoa(n)}, "uploadId": {init.UploadID}},
			body:  func() io.Reader { return io.NewSectionReader(r, o, ln) }, size: ln, payload: hex.EncodeToString(sum)})
		if err != nil {
			return err
		}
		parts = append(parts, part{Number: n, ETag: resp.Header.Get("ETag")})
		drain(resp)
	}
	body, _ := xml.Marshal(struct {
		XMLName xml.Name `xml:"CompleteMultipartUpload"`
		Parts   []part
	}{Parts: parts})
	sum := sha256.Sum256(body)
	resp, err = c.do(ctx, request{op: "upload", method: http.MethodPost, bucket: bucket, key: key,
		query: url.Values{"uploadId": {init.UploadID}},
		body:  func() io.Reader { return strings.NewReader(string(body)) }, size: int64(len(body)), payload: hex.EncodeToString(sum[:])})
	if err != nil {
		return err
	}
	// A completion can fail after a 200: the error is in the body.
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	drain(resp)
	var fail struct {
		XMLName xml.Name
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	}
	if xml.Unmarshal(data, &fail) == nil && fail.XMLName.Local == "Error" {
		return &objstore.Error{Op: "upload", URL: c.url(bucket, key), Status: 200, Code: fail.Code, Message: fail.Message}
	}
	return nil
}

func (c *Client) abort(ctx context.Context, bucket, key, id string) {
	resp, err := c.do(ctx, request{op: "abort upload", method: http.MethodDelete, bucket: bucket, key: key, query: url.Values{"uploadId": {id}}})
	if err == nil {
		drain(resp)
	}
}

// AbortIncomplete aborts the unfinished multipart uploads of key (what a
// killed upload leaves: parts that no listing shows but that are stored).
func (c *Client) AbortIncomplete(ctx context.Context, bucket, key string) error {
	resp, err := c.do(ctx, request{op: "list uploads", method: http.MethodGet, bucket: bucket, query: url.Values{"uploads": {""}, "prefix": {key}}})
	if err != nil {
		return err
	}
	var list struct {
		Uploads []struct {
			Key      string `xml:"Key"`
			UploadID string `xml:"UploadId"`
		} `xml:"Upload"`
	}
	err = xml.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&list)
	drain(resp)
	if err != nil {
		return nil // nothing readable to abort
	}
	for _, u := range list.Uploads {
		if u.Key == key {
			c.abort(ctx, bucket, key, u.UploadID)
		}
	}
	return nil
}
