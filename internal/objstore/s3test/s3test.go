// Package s3test gives tests a real S3-compatible server: the one
// scripts/minio.sh starts (or names) through CCM_TEST_S3_ENDPOINT,
// CCM_TEST_S3_BUCKET, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY. Without
// them a test is skipped with a line saying how to run it.
package s3test

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"

	"ccm/internal/objstore"
)

// Server is the test server and a prefix of the bucket no other test uses.
type Server struct {
	Config   objstore.Config
	Bucket   string
	Prefix   string
	Endpoint string
}

// URL is s3://BUCKET/PREFIX[/name].
func (s Server) URL(name ...string) string {
	return objstore.Location{Bucket: s.Bucket, Prefix: s.Prefix}.URL(name...)
}

// Env is the environment a ccm process needs to reach the server.
func (s Server) Env() []string {
	return []string{"CCM_S3_ENDPOINT=" + s.Endpoint, "AWS_ACCESS_KEY_ID=" + s.Config.AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + s.Config.SecretKey, "AWS_REGION=" + s.Config.Region}
}

// Need returns the server, or skips the test when none is configured.
func Need(t testing.TB) Server {
	t.Helper()
	ep := os.Getenv("CCM_TEST_S3_ENDPOINT")
	if ep == "" {
		t.Skip("no S3 server: run through scripts/test-s3.sh (scripts/minio.sh starts one), or set CCM_TEST_S3_ENDPOINT")
	}
	bucket := os.Getenv("CCM_TEST_S3_BUCKET")
	if bucket == "" {
		bucket = "ccm-test"
	}
	region := os.Getenv("AWS_REGION")
	if region == "" {
		region = "us-east-1"
	}
	cfg := objstore.Config{Endpoint: ep, Region: region, AccessKey: os.Getenv("AWS_ACCESS_KEY_ID"),
		SecretKey: os.Getenv("AWS_SECRET_ACCESS_KEY"), Source: "test"}
	return Server{Config: cfg, Bucket: bucket, Prefix: "t-" + randHex(6), Endpoint: ep}
}

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
