package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"log/slog"
	"net"
	"strings"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/gateway"
)

// cmdServe implements `gateway serve` (the default command): it serves the
// gateway until ctx is done (SIGINT, SIGTERM), then shuts down gracefully.
//
// Settings come from, in increasing precedence: defaults, the YAML file of
// --config (or GATEWAY_CONFIG), the GATEWAY_* environment, flags. The
// upstream is never taken from OLLAMA_HOST, which clients point at the
// gateway.
func cmdServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, src, err := serveConfig(args, getenv, stderr)
	if err != nil {
		return err
	}
	outcomesDefault(&cfg, getenv)
	logger := newLogger(cfg.Log, stderr)
	for _, w := range notImplemented(cfg) {
		logger.Warn("setting not implemented yet: " + w)
	}
	if err := gateway.CheckProtected(cfg); err != nil {
		return &exitError{code: 2, err: err}
	}
	srv, err := gateway.Build(cfg, logger)
	if err != nil {
		// Contracts, routes, the upstream URL: all configuration.
		return invalidConfig(src.Locate(err))
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "listening on http://%s\n", ln.Addr())
	logger.Info("listening", "addr", ln.Addr().String(), "upstreams", len(cfg.UpstreamList()), "upstream", cfg.UpstreamList()[0].URL,
		"routes", len(cfg.Routes), "admin_token", cfg.AdminToken != "", "outcomes", outcomesWhere(cfg.Outcomes))
	return srv.Serve(ctx, ln)
}

// serveConfig resolves the configuration: defaults < file < environment <
// flags, then validates it. A bad flag is a usage error (exit 2), and so
// is a bad configuration, reported whole: the file's unknown keys and
// values of the wrong type, the environment's, the values Validate
// refuses, and — what only loading shows — the contracts and routes,
// every problem with the line, variable or flag it came from. The Source
// locates the problems Build finds later.
func serveConfig(args []string, getenv func(string) string, stderr io.Writer) (config.Config, *config.Source, error) {
	fs := newFlagSet("serve", stderr)
	path := fs.String("config", "", "YAML config `FILE` (default $"+config.EnvConfig+")")
	listen := fs.String("listen", "", "serve on `ADDR` (default "+config.DefaultListen+"; $"+config.EnvListen+")")
	upstream := fs.String("upstream", "", "Ollama base `URL` (default "+config.DefaultUpstream+"; $"+config.EnvUpstream+"; never $OLLAMA_HOST)")
	upstreams := fs.String("upstreams", "", "several Ollama servers served as one: `URLs` separated by commas, each optionally URL;weight=N ($"+config.EnvUpstreams+")")
	contractsDir := fs.String("contracts", "", "directory of user contracts, `DIR` ($"+config.EnvContracts+")")
	adminToken := fs.String("admin-token", "", "bearer `TOKEN` for admin routes other than /healthz; prefer $"+config.EnvAdminToken+" (flags show in ps)")
	src := &config.Source{}
	pos, err := parseFlags(fs, args)
	if err != nil {
		return config.Config{}, src, err
	}
	if len(pos) > 0 {
		return config.Config{}, src, usageError("serve takes no arguments, got %q", pos)
	}

	if *path == "" {
		*path = getenv(config.EnvConfig)
	}
	cfg := config.Default()
	var problems []error
	if *path != "" {
		if cfg, src, err = config.Read(*path); err != nil {
			if errors.Is(err, iofs.ErrNotExist) || !isProblems(err) {
				// No file, or not YAML: nothing to check the rest against.
				return cfg, src, &exitError{code: 2, err: err}
			}
			problems = append(problems, config.Problems(err)...)
		}
	}
	if err := config.FromEnv(&cfg, getenv); err != nil {
		problems = append(problems, err)
	}
	src.OverrideEnv(getenv)
	// Only the flags given on the command line override: an unset flag
	// must not put a default back over the file or the environment.
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	fs.Visit(func(f *flag.Flag) {
		// set puts a string flag's value in its key, which the flag now
		// locates.
		set := func(field *string, value, key string) {
			*field = value
			src.Override(key, "--"+f.Name)
		}
		switch f.Name {
		case "listen":
			set(&cfg.Listen, *listen, "listen")
		case "upstream":
			set(&cfg.Upstream, *upstream, "upstream")
			if !given["upstreams"] {
				cfg.Upstreams = nil // one upstream on the command line replaces a pool
			}
		case "upstreams":
			list, err := config.ParseUpstreams(*upstreams)
			if err != nil {
				problems = append(problems, &config.Problem{Key: "upstreams", Where: "--upstreams", Err: fmt.Errorf("upstreams: %w", err)})
			}
			cfg.Upstreams = list
			src.Override("upstreams", "--upstreams")
			if !given["upstream"] {
				cfg.Upstream = ""
			}
		case "contracts":
			set(&cfg.ContractsDir, *contractsDir, "contracts_dir")
		case "admin-token":
			set(&cfg.AdminToken, *adminToken, "admin_token")
		}
	})
	problems = append(problems, config.Problems(cfg.Validate())...)
	if len(problems) == 0 {
		return cfg, src, nil
	}
	// Build is not reached: what it would find is found here, so that one
	// run reports all. A key already at fault is not reported twice.
	seen := map[string]bool{}
	for _, p := range problems {
		var cp *config.Problem
		if errors.As(p, &cp) && cp.Key != "" {
			seen[cp.Key] = true
		}
	}
	for _, p := range config.Problems(gateway.Check(cfg)) {
		var cp *config.Problem
		if errors.As(p, &cp) && seen[cp.Key] {
			continue
		}
		problems = append(problems, p)
	}
	return cfg, src, invalidConfig(src.Locate(errors.Join(problems...)))
}

// invalidConfig is the usage error of a configuration's problems, one a
// line.
func invalidConfig(err error) error {
	return &exitError{code: 2, err: fmt.Errorf("invalid configuration:\n%w", err)}
}

// isProblems reports whether err holds a *config.Problem: the file was
// read and decoded, with problems.
func isProblems(err error) bool {
	var p *config.Problem
	return errors.As(err, &p)
}

// newLogger returns the process logger on w, as the config asks.
func newLogger(c config.Log, w io.Writer) *slog.Logger {
	var level slog.Level
	switch strings.ToLower(c.Level) {
	case "debug":
		level = slog.LevelDebug
	case "warn", "warning":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	default:
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	if strings.EqualFold(c.Format, "json") {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// notImplemented names the settings of cfg that ask for something the
// gateway does not do yet, one line each starting with the YAML key. The
// defaults of those settings are silent: they are documented as unused.
func notImplemented(cfg config.Config) []string {
	var out []string
	return out
}
