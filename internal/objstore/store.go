package objstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Info describes one object.
type Info struct {
	Key          string    `json:"key"`
	Size         int64     `json:"size"`
	LastModified time.Time `json:"last_modified"`
	ETag         string    `json:"etag,omitempty"`
}

// Written is what GetFile wrote to its file.
type Written struct {
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"` // hex
}

// Store is what the remote archive needs of object storage. Its HTTP
// implementation (s3http) runs in a separate program, ccm-s3, that ccm
// talks to through the agent package, so that ccm itself, whose hooks
// start on every tool call, never links the TLS and HTTP stack.
type Store interface {
	// PutFile uploads the file at path (size bytes, SHA-256 sum) as
	// bucket/key; when it returns nil the server holds exactly those
	// bytes, checked by the server against sum.
	PutFile(ctx context.Context, bucket, key, path string, size int64, sum []byte) error
	// PutBytes uploads data as bucket/key, checked the same way.
	PutBytes(ctx context.Context, bucket, key string, data []byte) error
	// GetFile downloads bucket/key into a new file at path (0600) and
	// returns the size and SHA-256 of the bytes it wrote there, taken as
	// it wrote them (the file is not read again); the caller checks them.
	GetFile(ctx context.Context, bucket, key, path string) (Written, error)
	// GetBytes reads a whole object of at most max bytes.
	GetBytes(ctx context.Context, bucket, key string, max int64) ([]byte, error)
	// Head describes bucket/key; IsNotFound(err) when it is not there.
	Head(ctx context.Context, bucket, key string) (Info, error)
	// Delete removes bucket/key; an object that is not there is no error.
	Delete(ctx context.Context, bucket, key string) error
	// List calls fn for every object whose key starts with prefix, in
	// key order.
	List(ctx context.Context, bucket, prefix string, fn func(Info) error) error
	// AbortIncomplete aborts the unfinished multipart uploads of key.
	AbortIncomplete(ctx context.Context, bucket, key string) error
	// Probe lists at most one key under prefix: it fails as every
	// request would (server unreachable, credentials refused, no bucket).
	Probe(ctx context.Context, bucket, prefix string) error
	// Endpoint names the server, for messages.
	Endpoint() string
	// Close releases the connection (for the agent, its helper).
	Close() error
}

// Error is a request the server refused or that did not reach it. Its
// message is one line.
type Error struct {
	Op      string `json:"op"`                // "upload", "download", "list", ...
	URL     string `json:"url"`               // s3://bucket/key
	Status  int    `json:"status,omitempty"`  // HTTP status, 0 when the server was not reached
	Code    string `json:"code,omitempty"`    // the S3 error code (NoSuchBucket, AccessDenied, ...)
	Message string `json:"message,omitempty"` // the server's message
	// Err is the transport's error when the server was not reached (its
	// text is what travels from the helper: Cause).
	Err    error  `json:"-"`
	Cause  string `json:"cause,omitempty"`
	Server string `json:"server,omitempty"` // the endpoint, named when it was not reached
}

func (e *Error) Error() string {
	what := e.Op + " " + e.URL
	switch e.Code {
	case "NoSuchBucket":
		return fmt.Sprintf("%s: the bucket does not exist (create it first)", what)
	case "InvalidAccessKeyId":
		return fmt.Sprintf("%s: the server does not know the access key (check AWS_ACCESS_KEY_ID or the profile)", what)
	case "SignatureDoesNotMatch":
		return fmt.Sprintf("%s: the server refused the signature: the secret access key is wrong", what)
	case "AccessDenied":
		return fmt.Sprintf("%s: access denied (the credentials may not %s here)", what, e.Op)
	case "NoSuchKey", "NotFound":
		return fmt.Sprintf("%s: no such object", what)
	}
	cause := e.Cause
	if e.Err != nil {
		cause = e.Err.Error()
	}
	if cause != "" && e.Server != "" {
		return fmt.Sprintf("%s: cannot reach %s: %s", what, e.Server, cause)
	}
	if cause != "" {
		return fmt.Sprintf("%s: %s", what, cause)
	}
	msg := e.Code
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if msg == "" {
		msg = "no reason given"
	}
	return fmt.Sprintf("%s: the server answered %d %s", what, e.Status, OneLine(msg))
}

func (e *Error) Unwrap() error { return e.Err }

// IsNotFound reports whether err says the object (not the bucket) is not
// there.
func IsNotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && (e.Code == "NoSuchKey" || e.Code == "NotFound" || e.Status == 404 && e.Code == "")
}

// OneLine squeezes a server's message onto one short line.
func OneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
