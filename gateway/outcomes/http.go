package outcomes

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/contractgateway/gateway/middleware/apierr"
)

// ParamError is a bad query parameter of GET /admin/outcomes or
// /admin/trends; its message names the parameter.
type ParamError struct {
	Param string
	Msg   string
}

func (e *ParamError) Error() string { return e.Param + ": " + e.Msg }

// maxParamLen bounds a filter value: no name a gateway writes is longer,
// and a longer one would only cost the database a scan.
const maxParamLen = 512

// maxBuckets bounds the buckets of one series, so that a minute step over
// a year cannot ask for half a million points.
const maxBuckets = 10000

// DefaultTrendRange is the range of a trend without since.
const DefaultTrendRange = 24 * time.Hour

// ParseQuery reads the parameters of GET /admin/outcomes: status,
// contract, model, code, since, until (RFC 3339), limit (1 to MaxLimit,
// default DefaultLimit) and cursor (a next_cursor). An unknown parameter
// is an error too: a misspelt filter would otherwise list everything.
func ParseQuery(v url.Values) (Query, error) {
	var q Query
	for name, vals := range v {
		if len(vals) != 1 {
			return Query{}, &ParamError{name, "given more than once"}
		}
		val := vals[0]
		if len(val) > maxParamLen {
			return Query{}, &ParamError{name, fmt.Sprintf("longer than %d bytes", maxParamLen)}
		}
		var err error
		switch name {
		case "status":
			q.Status = val
		case "contract":
			q.Contract = val
		case "model":
			q.Model = val
		case "code":
			q.Code = val
		case "since":
			q.Since, err = parseTime(name, val)
		case "until":
			q.Until, err = parseTime(name, val)
		case "limit":
			n, perr := strconv.Atoi(val)
			if perr != nil || n < 1 || n > MaxLimit {
				err = &ParamError{name, fmt.Sprintf("%q: want a number from 1 to %d", val, MaxLimit)}
			}
			q.Limit = n
		case "cursor":
			if val != "" {
				c, cerr := ParseCursor(val)
				if cerr != nil {
					err = &ParamError{name, cerr.Error()}
				}
				q.After = &c
			}
		default:
			err = &ParamError{name, "unknown parameter; want status, contract, model, code, since, until, limit or cursor"}
		}
		if err != nil {
			return Query{}, err
		}
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && !q.Since.Before(q.Until) {
		return Query{}, &ParamError{"since", "must be before until"}
	}
	return q, nil
}

// ParseTrendQuery reads the parameters of GET /admin/trends: by (status,
// code, model or contract; default status), step (1m, 1h or 1d; default
// 1h), since and until (RFC 3339; default the DefaultTrendRange up to
// now).
func ParseTrendQuery(v url.Values, now time.Time) (TrendQuery, string, error) {
	q := TrendQuery{By: ByStatus, Step: time.Hour}
	stepName := "1h"
	for name, vals := range v {
		if len(vals) != 1 {
			return TrendQuery{}, "", &ParamError{name, "given more than once"}
		}
		val := vals[0]
		var err error
		switch name {
		case "by":
			if !slices.Contains([]string{ByStatus, ByCode, ByModel, ByContract}, val) {
				err = &ParamError{name, fmt.Sprintf("%.64q: want status, code, model or contract", val)}
			}
			q.By = val
		case "step":
			d, ok := Steps[val]
			if !ok {
				err = &ParamError{name, fmt.Sprintf("%.64q: want 1m, 1h or 1d", val)}
			}
			q.Step, stepName = d, val
		case "since":
			q.Since, err = parseTime(name, val)
		case "until":
			q.Until, err = parseTime(name, val)
		default:
			err = &ParamError{name, "unknown parameter; want by, step, since or until"}
		}
		if err != nil {
			return TrendQuery{}, "", err
		}
	}
	if q.Until.IsZero() {
		q.Until = now.UTC()
	}
	if q.Since.IsZero() {
		q.Since = q.Until.Add(-DefaultTrendRange)
	}
	if !q.Since.Before(q.Until) {
		return TrendQuery{}, "", &ParamError{"since", "must be before until"}
	}
	if n := q.Until.Sub(q.Since) / q.Step; n > maxBuckets {
		return TrendQuery{}, "", &ParamError{"since", fmt.Sprintf("the range holds %d steps of %s; at most %d: a shorter range or a longer step", n, stepName, maxBuckets)}
	}
	return q, stepName, nil
}

func parseTime(name, val string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, val)
	if err != nil {
		return time.Time{}, &ParamError{name, fmt.Sprintf("%.64q: want an RFC 3339 time such as 2026-01-02T15:04:05Z", val)}
	}
	return t.UTC(), nil
}

// String is the cursor as next_cursor gives it: opaque to clients (base64
// of the record's time in microseconds and its id).
func (c Cursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.Time.UnixMicro(), 10) + ":" + c.ID))
}

// ParseCursor reads a cursor String made.
func ParseCursor(s string) (Cursor, error) {
	bad := errors.New("not a cursor this gateway gave (next_cursor of the previous page)")
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Cursor{}, bad
	}
	ts, id, ok := strings.Cut(string(raw), ":")
	if !ok {
		return Cursor{}, bad
	}
	n, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != ts {
		return Cursor{}, bad
	}
	return Cursor{Time: time.UnixMicro(n).UTC(), ID: id}, nil
}

// Handler answers a GET of the admin surface with the value its route
// sends as JSON, or with an error for the gateway's one error writer: it
// writes nothing itself, so that every admin route's errors take one shape
// and no store's error text reaches a client.
type Handler func(*http.Request) (any, error)

// ClientError is err as an admin route returns it: a *ParamError is the
// client's mistake, a 400 whose message names the parameter; anything else
// is left for apierr.From (a 500 that says nothing of its cause).
func ClientError(err error) error {
	var pe *ParamError
	if errors.As(err, &pe) {
		return &apierr.Error{Code: http.StatusBadRequest, Msg: pe.Error(), Err: err}
	}
	return err
}

// storeError is a failure of the store to answer r: a 503 whose message
// says the store did not answer, with the store's own error (which may name
// hosts, users, files) kept for the log; the context's error when the
// client left or the deadline passed.
func storeError(r *http.Request, err error) error {
	if r.Context().Err() != nil {
		return apierr.WithContext(r.Context(), err)
	}
	return &apierr.Error{Code: http.StatusServiceUnavailable, Msg: "the outcome store did not answer; the cause is in the gateway's log", Err: err}
}

// ListHandler serves GET /admin/outcomes: {"outcomes": [...],
// "next_cursor": "..."}, newest first; next_cursor is left out on the
// last page.
func ListHandler(s Store) Handler {
	return func(r *http.Request) (any, error) {
		q, err := ParseQuery(r.URL.Query())
		if err != nil {
			return nil, ClientError(err)
		}
		page, err := s.List(r.Context(), q)
		if err != nil {
			return nil, storeError(r, err)
		}
		out := struct {
			Outcomes   []Record `json:"outcomes"`
			NextCursor string   `json:"next_cursor,omitempty"`
		}{Outcomes: page.Records}
		if page.Next != nil {
			out.NextCursor = page.Next.String()
		}
		return out, nil
	}
}

// TrendsHandler serves GET /admin/trends: {"by", "step", "since",
// "until", "series": [{"key", "points": [{"t", "n"}]}]}. Buckets without
// a record are left out.
func TrendsHandler(s Store, now func() time.Time) Handler {
	return func(r *http.Request) (any, error) {
		q, step, err := ParseTrendQuery(r.URL.Query(), now())
		if err != nil {
			return nil, ClientError(err)
		}
		series, err := s.Trends(r.Context(), q)
		if err != nil {
			return nil, storeError(r, err)
		}
		for i := range series {
			if series[i].Points == nil {
				series[i].Points = []Point{}
			}
		}
		return struct {
			By     string    `json:"by"`
			Step   string    `json:"step"`
			Since  time.Time `json:"since"`
			Until  time.Time `json:"until"`
			Series []Series  `json:"series"`
		}{q.By, step, q.Since, q.Until, series}, nil
	}
}
