module ccm

go 1.26.8

require (
	github.com/klauspost/compress v1.20.3
	github.com/pkoukk/tiktoken-go v0.1.8
	github.com/pkoukk/tiktoken-go-loader v0.0.2
	github.com/rogpeppe/go-internal v1.16.0
	github.com/tidwall/gjson v1.20.0
	github.com/tidwall/sjson v1.2.5
	github.com/urfave/cli/v3 v3.14.0
	golang.org/x/sys v0.49.0
	golang.org/x/term v0.47.0
)

require (
	github.com/dlclark/regexp2 v1.10.0 // indirect
	github.com/google/uuid v1.3.0 // indirect
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.2.0 // indirect
	golang.org/x/tools v0.26.0 // indirect
)
