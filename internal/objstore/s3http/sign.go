package s3http

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"ccm/internal/objstore"
)

// emptySHA256 is the hex SHA-256 of no bytes: the payload hash of a
// request without a body.
const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// sign adds AWS Signature Version 4 headers to req: x-amz-date,
// x-amz-content-sha256 (payloadHash, the hex SHA-256 of the body, which
// the server recomputes), x-amz-security-token with a session token, and
// Authorization. The signed headers are host and every x-amz-*,
// content-md5, content-type, range and date header the request carries.
func sign(req *http.Request, c *objstore.Config, region, payloadHash string, now time.Time) {
	amzDate := now.UTC().Format("20060102T150405Z")
	day := amzDate[:8]
	req.Header.Set("X-Amz-Date", amzDate)
	req.Header.Set("X-Amz-Content-Sha256", payloadHash)
	if c.SessionToken != "" {
		req.Header.Set("X-Amz-Security-Token", c.SessionToken)
	}
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	type hdr struct{ name, value string }
	hs := []hdr{{"host", host}}
	for name, vals := range req.Header {
		ln := strings.ToLower(name)
		if strings.HasPrefix(ln, "x-amz-") || ln == "content-md5" || ln == "content-type" || ln == "range" || ln == "date" {
			for i := range vals {
				vals[i] = strings.Join(strings.Fields(vals[i]), " ")
			}
			hs = append(hs, hdr{ln, strings.Join(vals, ",")})
		}
	}
	sort.Slice(hs, func(i, j int) bool { return hs[i].name < hs[j].name })
	var canonHeaders strings.Builder
	names := make([]string, len(hs))
	for i, h := range hs {
		canonHeaders.WriteString(h.name + ":" + h.value + "\n")
		names[i] = h.name
	}
	signed := strings.Join(names, ";")
	canon := strings.Join([]string{
		req.Method,
		escapePath(req.URL.Path),
		canonicalQuery(req.URL.Query()),
		canonHeaders.String(),
		signed,
		payloadHash,
	}, "\n")
	scope := day + "/" + region + "/s3/aws4_request"
	sum := sha256.Sum256([]byte(canon))
	toSign := "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scope + "\n" + hex.EncodeToString(sum[:])
	key := hmacSHA256([]byte("AWS4"+c.SecretKey), day)
	key = hmacSHA256(key, region)
	key = hmacSHA256(key, "s3")
	key = hmacSHA256(key, "aws4_request")
	sig := hex.EncodeToString(hmacSHA256(key, toSign))
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+c.AccessKey+"/"+scope+
		", SignedHeaders="+signed+", Signature="+sig)
}

func hmacSHA256(key []byte, data string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(data))
	return h.Sum(nil)
}

// canonicalQuery sorts the query by name, then value, each URI-encoded.
func canonicalQuery(q url.Values) string {
	var parts []string
	for k, vs := range q {
		for _, v := range vs {
			parts = append(parts, escape(k, true)+"="+escape(v, true))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, "&")
}

// escapePath URI-encodes a path, keeping its '/'.
func escapePath(p string) string {
	if p == "" {
		return "/"
	}
	return escape(p, false)
}

// escape is SigV4's URI encoding: every byte but A-Z a-z 0-9 - _ . ~ is
// %XX (uppercase), '/' too when slash is set.
func escape(s string, slash bool) string {
	const hexd = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' || c == '/' && !slash {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexd[c>>4])
		b.WriteByte(hexd[c&15])
	}
	return b.String()
}
