// Package objstore talks to S3-compatible object storage (AWS S3, MinIO,
// Cloudflare R2, ...): verified uploads, downloads, listings and deletes,
// signed with AWS Signature Version 4, with the credentials and settings
// every AWS tool reads (AWS_ACCESS_KEY_ID and friends, ~/.aws/credentials,
// ~/.aws/config, AWS_PROFILE).
//
// It is written on the standard library alone, not on an S3 SDK: ccm's
// hooks run in the same binary, every package's initialisation runs at
// every hook's start, and an SDK's (minio-go: regexps, CPU probing, a
// machine id read) made the idle hook about 1.6 times slower, where
// net/http and encoding/xml cost nothing measurable
// (scripts/bench-remote.sh measures both).
//
// Every upload is signed with the SHA-256 of its bytes
// (x-amz-content-sha256), which the server recomputes and compares before
// it stores anything: a PUT that returns success stored exactly those
// bytes. An object appears whole or not at all; a multipart upload that
// is interrupted leaves parts no listing shows, which AbortIncomplete
// removes.
//
// The package imports nothing of ccm: it is the foundation the remote
// archive (internal/remote) is built on.
package objstore
