package pgtest

import (
	"testing"
)

// TestStartStopRestart checks that a started server answers, a stopped
// one does not, and a restarted one answers again on the same DSN.
func TestStartStopRestart(t *testing.T) {
	s := Start(t)
	dsn := s.DSN
	if err := s.ping(); err != nil {
		t.Fatalf("ping after Start = %v, want nil", err)
	}
	s.Stop()
	if err := s.ping(); err == nil {
		t.Fatal("ping after Stop = nil, want an error")
	}
	s.Restart(t)
	if s.DSN != dsn {
		t.Errorf("DSN after Restart = %q, want %q", s.DSN, dsn)
	}
	if err := s.ping(); err != nil {
		t.Fatalf("ping after Restart = %v, want nil", err)
	}
	if db := s.NewDatabase(t); db == dsn {
		t.Errorf("NewDatabase = the server's DSN %q, want a database of its own", db)
	}
}
