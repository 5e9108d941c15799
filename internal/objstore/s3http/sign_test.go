package s3http

import (
	"net/http"
	"testing"
	"time"

	"ccm/internal/objstore"
)

// TestSignAsAWSExamples: the three header-signing examples of AWS's
// Signature Version 4 documentation for S3 ("Examples: Signature
// Calculations in AWS Signature Version 4", GET Object, PUT Object, GET
// Bucket), with their published keys, request and signatures.
func TestSignAsAWSExamples(t *testing.T) {
	cfg := &objstore.Config{AccessKey: "AKIAIOSFODNN7EXAMPLE", SecretKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}
	now := time.Date(2013, 5, 24, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name, method, url, payload string
		headers                    map[string]string
		signed, sig                string
	}{
		{"get object", "GET", "https://examplebucket.s3.amazonaws.com/test.txt", emptySHA256,
			map[string]string{"Range": "bytes=0-9"},
			"host;range;x-amz-content-sha256;x-amz-date", "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"},
		{"put object", "PUT", "https://examplebucket.s3.amazonaws.com/test$file.text", "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072",
			map[string]string{"Date": "Fri, 24 May 2013 00:00:00 GMT", "X-Amz-Storage-Class": "REDUCED_REDUNDANCY"},
			"date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class", "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd"},
		{"get bucket", "GET", "https://examplebucket.s3.amazonaws.com/?max-keys=2&prefix=J", emptySHA256, nil,
			"host;x-amz-content-sha256;x-amz-date", "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"},
	} {
		req, err := http.NewRequest(c.method, c.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range c.headers {
			req.Header.Set(k, v)
		}
		sign(req, cfg, "us-east-1", c.payload, now)
		auth := req.Header.Get("Authorization")
		want := "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=" + c.signed + ", Signature=" + c.sig
		if auth != want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, auth, want)
		}
	}
}
