package guardlog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/contractgateway/gateway/gateway/outcomes"
	"github.com/contractgateway/gateway/gateway/stats"
	"github.com/contractgateway/gateway/middleware"
)

// storeCause is a store's error as a database driver gives it: it names
// the database's host, user and address, which no client may read.
var storeCause = errors.New("failed to connect to host=db.internal user=gateway: dial tcp 10.0.0.5:5432: connection refused")

// failingStore is an outcome store whose every read fails with storeCause.
type failingStore struct{ outcomes.Store }

func (failingStore) List(context.Context, outcomes.Query) (outcomes.Page, error) {
	return outcomes.Page{}, storeCause
}

func (failingStore) Trends(context.Context, outcomes.TrendQuery) ([]outcomes.Series, error) {
	return nil, storeCause
}

func (failingStore) Summary(context.Context, outcomes.SummaryQuery) (outcomes.Summary, error) {
	return outcomes.Summary{}, storeCause
}

// serveRoutes answers a GET of target from l's routes on an echo server
// whose error handler is the gateway's one writer, and returns the answer
// and the error the writer recorded for the request's log line.
func serveRoutes(t *testing.T, l *Log, target string) (*httptest.ResponseRecorder, string) {
	t.Helper()
	e := echo.New()
	e.HTTPErrorHandler = middleware.ErrorHandler
	var logged string
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if err := next(c); err != nil {
				c.Error(err)
			}
			if he := middleware.LoggedError(c); he != nil {
				logged = he.Cause()
			}
			return nil
		}
	})
	l.Routes(e.Group(""))
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	return rec, logged
}

// TestRoutesErrorsThroughOneWriter checks that the errors of
// /admin/outcomes and /admin/trends reach the client through the one
// error writer, in Ollama's shape {"error": "…"} with their status, and
// that a store's failure is a 503 whose body holds none of the store's
// error while the request's log line does.
func TestRoutesErrorsThroughOneWriter(t *testing.T) {
	failing := &Log{store: failingStore{}}
	tests := []struct {
		name       string
		log        *Log
		target     string
		wantStatus int
		wantMsg    string // prefix of the client's message
		wantLogged string // substring of the log line's cause; "" for none
	}{
		{"outcomes with the store off", nil, "/admin/outcomes", http.StatusNotFound, "the outcome store is off", ""},
		{"trends with the store off", nil, "/admin/trends", http.StatusNotFound, "the outcome store is off", ""},
		{"outcomes with a bad parameter", failing, "/admin/outcomes?stauts=failed", http.StatusBadRequest, "stauts: unknown parameter", ""},
		{"trends with a bad parameter", failing, "/admin/trends?step=5m", http.StatusBadRequest, "step: ", ""},
		{"outcomes with the store failing", failing, "/admin/outcomes", http.StatusServiceUnavailable, "the outcome store did not answer", "10.0.0.5"},
		{"trends with the store failing", failing, "/admin/trends", http.StatusServiceUnavailable, "the outcome store did not answer", "10.0.0.5"},
	}
	for _, tt := range tests {
		rec, logged := serveRoutes(t, tt.log, tt.target)
		var body map[string]string
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || len(body) != 1 {
			t.Errorf("%s: GET %s body = %q, want exactly {\"error\": string}", tt.name, tt.target, rec.Body)
			continue
		}
		if rec.Code != tt.wantStatus || !strings.HasPrefix(body["error"], tt.wantMsg) {
			t.Errorf("%s: GET %s = %d %q, want %d %q…", tt.name, tt.target, rec.Code, body["error"], tt.wantStatus, tt.wantMsg)
		}
		if ct := rec.Header().Get(echo.HeaderContentType); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s: GET %s Content-Type = %q, want application/json", tt.name, tt.target, ct)
		}
		for _, secret := range []string{"10.0.0.5", "db.internal", "user=gateway"} {
			if strings.Contains(rec.Body.String(), secret) {
				t.Errorf("%s: GET %s body %q holds the store's error (%q)", tt.name, tt.target, rec.Body, secret)
			}
		}
		if !strings.Contains(logged, tt.wantLogged) {
			t.Errorf("%s: GET %s logged %q, want it to hold %q", tt.name, tt.target, logged, tt.wantLogged)
		}
	}
}

// TestStatsReportHidesStoreError checks that a store that fails to answer
// /admin/stats leaves this process's counts with a store_error that says
// so without the store's error, which is logged instead.
func TestStatsReportHidesStoreError(t *testing.T) {
	var logs bytes.Buffer
	l := &Log{store: failingStore{}, retention: time.Hour, log: slog.New(slog.NewTextHandler(&logs, nil))}
	rep, err := l.StatsReport(stats.New(time.Now))(httptest.NewRequest(http.MethodGet, "/admin/stats", nil))
	if err != nil {
		t.Fatalf("StatsReport = %v, want the process's counts", err)
	}
	if rep.StoreError != storeUnanswered || rep.Source != "process" {
		t.Errorf("StatsReport store_error = %q, source %q; want %q, process", rep.StoreError, rep.Source, storeUnanswered)
	}
	if !strings.Contains(logs.String(), "10.0.0.5") {
		t.Errorf("log = %q, want the store's error in it", logs.String())
	}
}
