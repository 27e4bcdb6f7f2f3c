package app_test

import (
	"cmp"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/app"
	"github.com/earshot-dev/earshot/config"
	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/recognizer/openai"
	"github.com/earshot-dev/earshot/recognizer/remote"
)

// TestConfigSet: Set parses every kind of field as the YAML file would,
// replaces lists and maps whole, resets a key to its default on "", and
// rejects bad values and unknown paths.
func TestConfigSet(t *testing.T) {
	tests := []struct {
		path, value string
		get         func(*app.Config) any
		want        any
		wantErr     string // substring; "" = no error
	}{
		{"listen", "0.0.0.0:9000", func(c *app.Config) any { return c.Listen }, "0.0.0.0:9000", ""},
		{"public_url", "https://a.example/x#y", func(c *app.Config) any { return c.PublicURL }, "https://a.example/x#y", ""},
		{"addons.llm.api_key", "s3cr:t [x]", func(c *app.Config) any { return string(c.Addons.LLM.APIKey) }, "s3cr:t [x]", ""},
		{"workers", "4", func(c *app.Config) any { return c.Workers }, 4, ""},
		{"workers", "four", nil, nil, `workers: must be an integer, not "four"`},
		{"limits.max_upload_bytes", "2048", func(c *app.Config) any { return c.Limits.MaxUploadBytes }, int64(2048), ""},
		{"limits.max_upload_bytes", "1.5", nil, nil, "must be an integer"},
		{"sphinx.fast_search", "true", func(c *app.Config) any { return c.Sphinx.FastSearch }, true, ""},
		{"sphinx.fast_search", "maybe", nil, nil, "must be true or false"},
		{"api.read_timeout", "90s", func(c *app.Config) any { return c.API.ReadTimeout }, 90 * time.Second, ""},
		{"api.read_timeout", "90", nil, nil, "must be a duration"},
		{"api.max_conns", "7", func(c *app.Config) any { return c.API.MaxConns }, 7, ""},
		{"sip.jitter.depth", "9", func(c *app.Config) any { return c.SIP.Jitter.Depth }, 9, ""},
		{"sip.allow", "[10.0.0.0/8, 192.168.1.2]", func(c *app.Config) any { return c.SIP.Allow }, []string{"10.0.0.0/8", "192.168.1.2"}, ""},
		{"sip.allow", "10.0.0.0/8,192.168.1.2", func(c *app.Config) any { return c.SIP.Allow }, []string{"10.0.0.0/8", "192.168.1.2"}, ""},
		{"sip.allow", "[]", func(c *app.Config) any { return c.SIP.Allow }, []string{}, ""},
		{"fetch.deny", "[10.0.0.0/8, fd00::/8]", func(c *app.Config) any { return c.Fetch.Deny },
			[]netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}, ""},
		{"fetch.deny", "[]", func(c *app.Config) any { return c.Fetch.Deny }, []netip.Prefix{}, ""},
		{"fetch.deny", "", func(c *app.Config) any { return c.Fetch.Deny }, []netip.Prefix(nil), ""},
		{"fetch.deny", "10.0.0.0/33", nil, nil, "must be a list such as [a, b] of a CIDR"},
		{"callbacks.allow", "[10.1.2.0/24]", func(c *app.Config) any { return c.Callbacks.Allow },
			[]netip.Prefix{netip.MustParsePrefix("10.1.2.0/24")}, ""},
		{"callbacks.allow", "", func(c *app.Config) any { return c.Callbacks.Allow }, []netip.Prefix(nil), ""},
		{"limits.max_account_bytes", "0", func(c *app.Config) any { return *c.Limits.MaxAccountBytes }, int64(0), ""},
		{"limits.max_account_bytes", "1048576", func(c *app.Config) any { return *c.Limits.MaxAccountBytes }, int64(1 << 20), ""},
		{"limits.max_account_bytes", "", func(c *app.Config) any { return c.Limits.MaxAccountBytes }, (*int64)(nil), ""},
		{"engines.routes.model-1", "gpu", func(c *app.Config) any { return c.Engines.Routes.Model1 }, "gpu", ""},
		{"engines.routes.languages", "{en: sphinx, fr: gpu}", func(c *app.Config) any { return c.Engines.Routes.Languages },
			map[string]string{"en": "sphinx", "fr": "gpu"}, ""},
		{"engines.routes.languages", "[en]", nil, nil, "must be a mapping"},
		{"engines.remote", "[{name: gpu, url: 'http://gpu:8000/v1', model: w, timeout: 5s}]",
			func(c *app.Config) any {
				r := c.Engines.Remote
				return []any{len(r), r[0].Name, r[0].URL, r[0].Timeout}
			},
			[]any{1, "gpu", "http://gpu:8000/v1", 5 * time.Second}, ""},
		{"engines.remote", "[{name: gpu, colour: red}]", nil, nil, "must be a list"},
		{"limits.requests_per_second", "0", func(c *app.Config) any { return *c.Limits.RequestsPerSecond }, 0.0, ""},
		{"limits.requests_per_second", "2.5", func(c *app.Config) any { return *c.Limits.RequestsPerSecond }, 2.5, ""},
		{"limits.requests_per_second", "", func(c *app.Config) any { return c.Limits.RequestsPerSecond }, (*float64)(nil), ""},
		{"limits.requests_per_second", "fast", nil, nil, `must be a number, not "fast"`},
		{"limits.nope", "1", nil, nil, "config: unknown key"},
		{"limits", "{max_queued: 3}", nil, nil, "config: unknown key"}, // sections are not keys
	}
	for _, tt := range tests {
		t.Run(tt.path+"="+tt.value, func(t *testing.T) {
			var c app.Config
			c.Limits.MaxUploadBytes = 99
			c.SIP.Allow = []string{"1.2.3.4"}
			c.Engines.Routes.Languages = map[string]string{"de": "x"} // replaced, not merged
			c.Fetch.Deny = media.DefaultDeny()
			one := 1.0
			c.Limits.RequestsPerSecond = &one
			err := c.Set(tt.path, tt.value)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Set = %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Set: %v", err)
			}
			if got := tt.get(&c); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

// TestConfigSetEmptyMeansDefault: an empty value gives the key back to
// SetDefaults.
func TestConfigSetEmptyMeansDefault(t *testing.T) {
	var want app.Config
	want.SetDefaults()
	c := want
	c.Workers, c.Live.TokenTTL, c.DataDir = 9, time.Hour*5, "/x"
	for _, p := range []string{"workers", "live.token_ttl", "data_dir"} {
		if err := c.Set(p, ""); err != nil {
			t.Fatal(err)
		}
	}
	c.SetDefaults()
	if c.Workers != want.Workers || c.Live.TokenTTL != want.Live.TokenTTL || c.DataDir != want.DataDir {
		t.Errorf("after Set(\"\") and SetDefaults: workers %d, token_ttl %s, data_dir %q; want the defaults %d, %s, %q",
			c.Workers, c.Live.TokenTTL, c.DataDir, want.Workers, want.Live.TokenTTL, want.DataDir)
	}
}

// TestConfigKeys: every leaf has one variable, named by the rule, and no two
// keys share one; sections are walked, not listed.
func TestConfigKeys(t *testing.T) {
	keys := app.Keys()
	seen := map[string]string{}
	paths := map[string]bool{}
	for _, k := range keys {
		if other, dup := seen[k.Env]; dup {
			t.Errorf("%s and %s share %s", other, k.Path, k.Env)
		}
		seen[k.Env] = k.Path
		paths[k.Path] = true
		if want := "EARSHOT_" + strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(k.Path)); k.Env != want {
			t.Errorf("%s: env %s, want %s", k.Path, k.Env, want)
		}
	}
	for _, p := range []string{"listen", "sphinx.decoders", "limits.max_upload_bytes", "live.capacity",
		"sip.jitter.max_gap", "engines.routes.model-3", "engines.remote", "api.read_timeout", "api.max_conns", "fetch.deny",
		"addons.llm.budget", "webrtc.disabled", "retention.interval", "callbacks.max_backoff"} {
		if !paths[p] {
			t.Errorf("ConfigKeys lacks %s", p)
		}
	}
	for _, p := range []string{"sip", "sip.jitter", "limits", "api"} {
		if paths[p] {
			t.Errorf("ConfigKeys lists the section %s as a key", p)
		}
	}
}

// TestApplyEnv: variables set keys by the naming rule, EARSHOT_DECODERS
// stays an alias, the test suites' switches, the API clients' variables
// and other variables are ignored, and every bad or unknown variable is
// reported by name.
func TestApplyEnv(t *testing.T) {
	var c app.Config
	err := config.ApplyEnv(&c, []string{
		"EARSHOT_LIMITS_MAX_UPLOAD_BYTES=4096",
		"EARSHOT_LIVE_CAPACITY=3",
		"EARSHOT_DECODERS=2",
		"EARSHOT_ENGINES_ROUTES_MODEL_1=sphinx",
		"EARSHOT_FETCH_DENY=10.0.0.0/8, 127.0.0.0/8",
		"EARSHOT_API_IDLE_TIMEOUT=5s",
		"EARSHOT_STORE_SEED=12", // a test switch, not a key
		"EARSHOT_KEY=es_x",      // earshotd stream's and submit's, not keys
		"EARSHOT_URL=http://127.0.0.1:8080",
		"PATH=/bin",
		"EARSHOT_LISTEN=127.0.0.1:1=2", // the value keeps its '='
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Limits.MaxUploadBytes != 4096 || c.Live.Capacity != 3 || c.Sphinx.Decoders != 2 || c.Engines.Routes.Model1 != "sphinx" ||
		len(c.Fetch.Deny) != 2 || c.API.IdleTimeout != 5*time.Second || c.Listen != "127.0.0.1:1=2" {
		t.Errorf("ApplyEnv set %+v", c)
	}

	err = config.ApplyEnv(&c, []string{"EARSHOT_WORKERS=x", "EARSHOT_LIMIT_MAX_QUEUED=1", "EARSHOT_SPHINX_DECODERS=3"})
	var envErrs []*config.EnvError
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var ee *config.EnvError
		if !errors.As(e, &ee) {
			t.Fatalf("%v is not an *EnvError", e)
		}
		envErrs = append(envErrs, ee)
	}
	if len(envErrs) != 2 || envErrs[0].Var != "EARSHOT_WORKERS" || envErrs[0].Key != "workers" ||
		envErrs[1].Var != "EARSHOT_LIMIT_MAX_QUEUED" || !errors.Is(envErrs[1], config.ErrUnknownKey) {
		t.Errorf("ApplyEnv = %v", err)
	}
	if c.Sphinx.Decoders != 3 {
		t.Errorf("a good variable beside bad ones was not applied: decoders %d", c.Sphinx.Decoders)
	}
}

// TestLoadConfigPrecedence: the file wins over defaults, the environment
// over the file; fetch.deny [] is kept empty (deny nothing) while a missing
// one takes media.DefaultDeny().
func TestLoadConfigPrecedence(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := write("a.yaml", "workers: 3\nlimits:\n  max_queued: 5\nfetch:\n  deny: []\napi:\n  max_conns: 10\n")
	c, err := app.Load(p, []string{"EARSHOT_LIMITS_MAX_QUEUED=6"})
	if err != nil {
		t.Fatal(err)
	}
	c.SetDefaults()
	if c.Workers != 3 || c.Limits.MaxQueued != 6 || c.API.MaxConns != 10 || c.Fetch.Deny == nil || len(c.Fetch.Deny) != 0 {
		t.Errorf("workers %d (file 3), max_queued %d (env 6), max_conns %d (file 10), deny %#v (file [])",
			c.Workers, c.Limits.MaxQueued, c.API.MaxConns, c.Fetch.Deny)
	}
	if err := c.Validate(); err != nil {
		t.Error(err)
	}

	c, err = app.Load(write("b.yaml", "workers: 2\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDefaults()
	if !reflect.DeepEqual(c.Fetch.Deny, media.DefaultDeny()) || c.API.ReadTimeout != 10*time.Minute || c.API.MaxConns != 4096 {
		t.Errorf("defaults: deny %v, read_timeout %s, max_conns %d", c.Fetch.Deny, c.API.ReadTimeout, c.API.MaxConns)
	}

	if _, err := app.Load(p, []string{"EARSHOT_NOPE=1"}); !errors.Is(err, config.ErrUnknownKey) || !strings.Contains(err.Error(), "EARSHOT_NOPE") {
		t.Errorf("unknown variable: %v", err)
	}
}

func TestConfigValidateAPIAndFetch(t *testing.T) {
	var c app.Config
	c.SetDefaults()
	c.API.MaxConns = -1
	c.API.IdleTimeout = -time.Second
	c.Fetch.Deny = []netip.Prefix{{}}
	c.Callbacks.Allow = []netip.Prefix{{}}
	minus := int64(-1)
	c.Limits.MaxAccountBytes = &minus
	err := c.Validate()
	for _, want := range []string{"api.max_conns: must be at least 1", "api.idle_timeout: must be > 0", "fetch.deny[0]: must be a CIDR",
		"callbacks.allow[0]: must be a CIDR", "limits.max_account_bytes: must be 0 (unlimited) or more"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate = %v, want %q", err, want)
		}
	}
}

// TestConfigSetKeepsSecrets: a bad list of engines is refused without
// echoing the value, which may hold an api_key.
func TestConfigSetKeepsSecrets(t *testing.T) {
	var c app.Config
	err := c.Set("engines.remote", "[{name: gpu, api_key: sk-SECRET, colour: red}]")
	if err == nil || strings.Contains(err.Error(), "sk-SECRET") || !strings.Contains(err.Error(), "colour") {
		t.Errorf("Set = %v, want an error naming the bad field without the key", err)
	}
}

// TestValidateNamesKeys: every problem of Validate is a *config.Problem
// whose Key is the dotted key of the file, whichever section found it, so
// config check needs no reading of the text.
func TestValidateNamesKeys(t *testing.T) {
	var c app.Config
	c.SetDefaults()
	c.Workers = 0
	c.Sphinx.Decoders = -1
	c.Live.Capacity = -1
	c.SIP.Routes = append(c.SIP.Routes, c.SIP.Routes...)
	c.SIP.RTPTimeout = time.Millisecond
	c.Engines.Remote = []remote.Config{{Name: "gpu", Endpoint: openai.Endpoint{Model: "w"}}}
	c.Engines.Remote[0].SetDefaults()
	c.Addons.LLM.Model = "m"
	c.API.MaxConns = -1
	c.WebRTC.MaxOfferBytes = 1
	var keys []string
	for _, p := range config.Problems(c.Validate()) {
		keys = append(keys, p.Key)
	}
	for _, want := range []string{"workers", "sphinx.decoders", "live.capacity", "sip.rtp_timeout", "engines.remote[0].url",
		"addons.llm.url", "api.max_conns", "webrtc.max_offer_bytes"} {
		if !slices.Contains(keys, want) {
			t.Errorf("Validate's problems name %v, want %s among them", keys, want)
		}
	}
}

// TestEverySectionDefaulted: after Config.SetDefaults every section of the
// file, at any depth, is at its own defaults (its SetDefaults changes
// nothing more), so no section is left out of the walk
// (config.SetSectionDefaults) nor defaulted from a stale value.
func TestEverySectionDefaulted(t *testing.T) {
	var c app.Config
	c.SetDefaults()
	var walk func(v reflect.Value, path string)
	walk = func(v reflect.Value, path string) {
		if d, ok := v.Addr().Interface().(config.Defaulter); ok {
			again := reflect.New(v.Type())
			again.Elem().Set(v)
			again.Interface().(config.Defaulter).SetDefaults()
			if !reflect.DeepEqual(again.Elem().Interface(), v.Interface()) {
				t.Errorf("%s (%T): its SetDefaults changes it after Config.SetDefaults", path, d)
			}
		}
		for i := range v.NumField() {
			f := v.Type().Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if f.IsExported() && name != "-" && f.Type.Kind() == reflect.Struct && f.Type.PkgPath() != "time" {
				walk(v.Field(i), path+"."+cmp.Or(name, f.Name))
			}
		}
	}
	walk(reflect.ValueOf(&c).Elem(), "")
}
