// Package objstore is what ccm knows of S3-compatible object storage (AWS
// S3, MinIO, Cloudflare R2, ...): s3:// locations, the settings and
// credentials every AWS tool reads (AWS_ACCESS_KEY_ID and friends,
// ~/.aws/credentials, ~/.aws/config, AWS_PROFILE), the Store interface of
// verified uploads, downloads, listings and deletes, and the one-line
// errors they fail with.
//
// The HTTP implementation, s3http (Signature Version 4 on the standard
// library alone), runs in a helper program, ccm-s3, that ccm talks to
// through the agent package: ccm's hooks start on every tool call, and Go
// initialises every package a program links at every start. An S3 SDK
// (minio-go: regexps, CPU probing, a machine id read) made the idle hook
// about 1.6 times slower, and the TLS and HTTP stack alone about 13%
// (scripts/bench-remote.sh); this package links neither.
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
