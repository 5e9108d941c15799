package objstore

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConfigFromEnv(t *testing.T) {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".aws"), 0o700)
	os.WriteFile(filepath.Join(home, ".aws", "credentials"), []byte(`
[default]
aws_access_key_id = AKDEFAULT
aws_secret_access_key = secretdefault
# a comment
[team]
aws_access_key_id=AKTEAM
aws_secret_access_key=secretteam
aws_session_token = tok
`), 0o600)
	os.WriteFile(filepath.Join(home, ".aws", "config"), []byte(`
[profile team]
region = eu-central-1
endpoint_url = https://acct.r2.cloudflarestorage.com
[profile cfgonly]
aws_access_key_id = AKCFG
aws_secret_access_key = secretcfg
`), 0o600)
	env := func(kv ...string) func(string) string {
		m := map[string]string{"HOME": home}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	c, err := ConfigFromEnv(env(), "")
	if err != nil || c.AccessKey != "AKDEFAULT" || c.SecretKey != "secretdefault" || c.Region != "us-east-1" || c.Endpoint != "" {
		t.Errorf("default profile: %+v, %v", c, err)
	}
	c, err = ConfigFromEnv(env("AWS_PROFILE", "team"), "")
	if err != nil || c.AccessKey != "AKTEAM" || c.SessionToken != "tok" || c.Region != "eu-central-1" || c.Endpoint != "https://acct.r2.cloudflarestorage.com" {
		t.Errorf("team profile: %+v, %v", c, err)
	}
	c, err = ConfigFromEnv(env("AWS_PROFILE", "cfgonly"), "http://127.0.0.1:9000")
	if err != nil || c.AccessKey != "AKCFG" || c.Endpoint != "http://127.0.0.1:9000" {
		t.Errorf("config-file credentials: %+v, %v", c, err)
	}
	c, err = ConfigFromEnv(env("AWS_ACCESS_KEY_ID", "AKENV", "AWS_SECRET_ACCESS_KEY", "secretenv", "AWS_REGION", "auto", "AWS_PROFILE", "team"), "")
	if err != nil || c.AccessKey != "AKENV" || c.SessionToken != "" || c.Region != "auto" {
		t.Errorf("environment first: %+v, %v", c, err)
	}
	if _, err := ConfigFromEnv(env("AWS_PROFILE", "nosuch"), ""); !errors.Is(err, ErrNoCredentials) {
		t.Errorf("unknown profile: %v", err)
	}
	if _, err := ConfigFromEnv(env("AWS_ACCESS_KEY_ID", "AKENV"), ""); err == nil || !strings.Contains(err.Error(), "incomplete") {
		t.Errorf("key without secret: %v", err)
	}
	for _, bad := range []string{"127.0.0.1:9000", "ftp://host", "http://host/path"} {
		if _, err := ConfigFromEnv(env(), bad); err == nil {
			t.Errorf("endpoint %q accepted", bad)
		}
	}
}
