package gateway

import "time"

// Defaults of the server's timeouts; in the config, zero means these and a
// negative value means none.
const (
	// DefaultIdleTimeout closes a keep-alive connection that carries no
	// request for this long.
	DefaultIdleTimeout = 120 * time.Second
	// DefaultBodyReadTimeout bounds the wait for the next bytes of a
	// request body (see edge.BodyReadTimeout): an upload that keeps
	// flowing (a model blob of gigabytes) is never cut.
	DefaultBodyReadTimeout = 60 * time.Second
)

// timeoutOr maps a config duration: zero is def, negative none (0).
func timeoutOr(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}
