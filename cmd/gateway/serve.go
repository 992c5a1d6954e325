package main

import (
	"context"
	"flag"
	"fmt"
	"io"
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
	cfg, err := serveConfig(args, getenv, stderr)
	if err != nil {
		return err
	}
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
		return &exitError{code: 2, err: fmt.Errorf("invalid configuration: %w", err)}
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "listening on http://%s\n", ln.Addr())
	logger.Info("listening", "addr", ln.Addr().String(), "upstream", cfg.Upstream,
		"routes", len(cfg.Routes), "admin_token", cfg.AdminToken != "")
	return srv.Serve(ctx, ln)
}

// serveConfig resolves the configuration: defaults < file < environment <
// flags, then validates it. A bad flag or config is a usage error (exit 2).
func serveConfig(args []string, getenv func(string) string, stderr io.Writer) (config.Config, error) {
	fs := newFlagSet("serve", stderr)
	path := fs.String("config", "", "YAML config `FILE` (default $"+config.EnvConfig+")")
	listen := fs.String("listen", "", "serve on `ADDR` (default "+config.DefaultListen+"; $"+config.EnvListen+")")
	upstream := fs.String("upstream", "", "Ollama base `URL` (default "+config.DefaultUpstream+"; $"+config.EnvUpstream+"; never $OLLAMA_HOST)")
	contractsDir := fs.String("contracts", "", "directory of user contracts, `DIR` ($"+config.EnvContracts+")")
	adminToken := fs.String("admin-token", "", "bearer `TOKEN` for admin routes other than /healthz; prefer $"+config.EnvAdminToken+" (flags show in ps)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return config.Config{}, err
	}
	if len(pos) > 0 {
		return config.Config{}, usageError("serve takes no arguments, got %q", pos)
	}

	if *path == "" {
		*path = getenv(config.EnvConfig)
	}
	cfg := config.Default()
	if *path != "" {
		if cfg, err = config.Load(*path); err != nil {
			return cfg, &exitError{code: 2, err: err}
		}
	}
	if err := config.FromEnv(&cfg, getenv); err != nil {
		return cfg, &exitError{code: 2, err: err}
	}
	// Only the flags given on the command line override: an unset flag
	// must not put a default back over the file or the environment.
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "listen":
			cfg.Listen = *listen
		case "upstream":
			cfg.Upstream = *upstream
		case "contracts":
			cfg.ContractsDir = *contractsDir
		case "admin-token":
			cfg.AdminToken = *adminToken
		}
	})
	if err := cfg.Validate(); err != nil {
		return cfg, &exitError{code: 2, err: fmt.Errorf("invalid configuration:\n%w", err)}
	}
	return cfg, nil
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
