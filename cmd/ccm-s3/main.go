// Command ccm-s3 is ccm's object storage helper: ccm starts it to upload,
// download and list objects in S3-compatible storage (ccm export -o
// s3://..., archive --to s3://..., import, unarchive --from, sessions
// --archived --from), and talks to it on its stdin and stdout
// (internal/objstore/agent). It is a program of its own so that ccm, whose
// hooks start on every tool call, does not carry the TLS and HTTP stack.
// It is not meant to be run by hand; install it beside ccm:
//
//	CGO_ENABLED=0 go install ./cmd/ccm ./cmd/ccm-s3
package main

import (
	"fmt"
	"os"

	"ccm/internal/objstore"
	"ccm/internal/objstore/agent"
	"ccm/internal/objstore/s3http"
)

func main() {
	err := agent.Serve(os.Stdin, os.Stdout, func(cfg objstore.Config) (objstore.Store, error) {
		return s3http.New(cfg)
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", agent.HelperName, err)
		os.Exit(2)
	}
}
