package main

import (
	"context"
	"errors"
	"io"
)

func cmdServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return errors.New("serve: not built yet")
}
