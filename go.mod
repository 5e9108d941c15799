module ccm

go 1.26.8

require (
	github.com/urfave/cli/v3 v3.14.0
	golang.org/x/sys v0.49.0
)
