package objstore

import (
	"bufio"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Config says where the object storage is and how to sign for it.
type Config struct {
	// Endpoint is the server's base URL (http://127.0.0.1:9000,
	// https://<account>.r2.cloudflarestorage.com); "" is AWS S3 itself.
	Endpoint string
	Region   string
	// AccessKey, SecretKey and SessionToken sign every request.
	AccessKey    string
	SecretKey    string
	SessionToken string
	// Source says where the credentials came from, for messages.
	Source string
	// Stall is how long a request may move no byte before it is given up
	// (0: one minute).
	Stall time.Duration
	// PartSize is the size of a multipart upload's parts, and objects
	// larger than it are uploaded in parts (0: 64 MiB).
	PartSize int64
}

// ErrNoCredentials means neither the environment nor the AWS files name
// an access key.
var ErrNoCredentials = errors.New("no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE and ~/.aws/credentials")

// ConfigFromEnv reads the settings every AWS tool reads, through getenv
// (os.Getenv in use): the access key from AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, else from the profile
// (AWS_PROFILE, "default") in the shared credentials file
// (AWS_SHARED_CREDENTIALS_FILE, ~/.aws/credentials) or the config file
// (AWS_CONFIG_FILE, ~/.aws/config); the region from AWS_REGION,
// AWS_DEFAULT_REGION or the profile, else us-east-1. endpoint, when not
// "", is the server; else AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL or the
// profile's endpoint_url; else AWS S3. Single sign-on, roles and
// credential processes are not read.
func ConfigFromEnv(getenv func(string) string, endpoint string) (Config, error) {
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	profile := firstOf(getenv("AWS_PROFILE"), getenv("AWS_DEFAULT_PROFILE"), "default")
	credFile := firstOf(getenv("AWS_SHARED_CREDENTIALS_FILE"), filepath.Join(home, ".aws", "credentials"))
	confFile := firstOf(getenv("AWS_CONFIG_FILE"), filepath.Join(home, ".aws", "config"))
	creds, err := readINI(credFile, profile)
	if err != nil {
		return Config{}, err
	}
	confSection := "profile " + profile
	if profile == "default" {
		confSection = "default"
	}
	conf, err := readINI(confFile, confSection)
	if err != nil {
		return Config{}, err
	}
	c := Config{
		Region:   firstOf(getenv("AWS_REGION"), getenv("AWS_DEFAULT_REGION"), conf["region"], "us-east-1"),
		Endpoint: firstOf(endpoint, getenv("AWS_ENDPOINT_URL_S3"), getenv("AWS_ENDPOINT_URL"), conf["endpoint_url"]),
	}
	switch {
	case getenv("AWS_ACCESS_KEY_ID") != "" || getenv("AWS_SECRET_ACCESS_KEY") != "":
		c.AccessKey, c.SecretKey, c.SessionToken = getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_SECRET_ACCESS_KEY"), getenv("AWS_SESSION_TOKEN")
		c.Source = "AWS_ACCESS_KEY_ID"
	case creds["aws_access_key_id"] != "":
		c.AccessKey, c.SecretKey, c.SessionToken = creds["aws_access_key_id"], creds["aws_secret_access_key"], creds["aws_session_token"]
		c.Source = fmt.Sprintf("profile %s in %s", profile, credFile)
	case conf["aws_access_key_id"] != "":
		c.AccessKey, c.SecretKey, c.SessionToken = conf["aws_access_key_id"], conf["aws_secret_access_key"], conf["aws_session_token"]
		c.Source = fmt.Sprintf("profile %s in %s", profile, confFile)
	default:
		return Config{}, ErrNoCredentials
	}
	if c.AccessKey == "" || c.SecretKey == "" {
		return Config{}, fmt.Errorf("incomplete S3 credentials from %s: both an access key id and a secret access key are needed", c.Source)
	}
	if c.Endpoint != "" {
		if err := CheckEndpoint(c.Endpoint); err != nil {
			return Config{}, err
		}
	}
	return c, nil
}

// CheckEndpoint accepts a server's base URL: http:// or https://, a host,
// no path or query.
func CheckEndpoint(e string) error {
	u, err := url.Parse(e)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("endpoint %q is not an http:// or https:// URL", e)
	}
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" {
		return fmt.Errorf("endpoint %q must be a server's address alone (no path or query)", e)
	}
	return nil
}

func firstOf(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// readINI returns the keys of one section of an AWS-style INI file. A
// missing file has none; keys are lowercased, values trimmed.
func readINI(path, section string) (map[string]string, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' && strings.HasSuffix(line, "]") {
			in = strings.TrimSpace(line[1:len(line)-1]) == section
			continue
		}
		if !in {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		out[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return out, nil
}
