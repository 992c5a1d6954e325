package outcomes

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// DefaultSpoolMaxBytes bounds a spool when its WriterConfig says zero:
// about an hour of records at 100 requests/s (a record takes 300 to 500
// bytes as a line).
const DefaultSpoolMaxBytes = 256 << 20

// ErrSpoolLocked is OpenSpool's error when another process holds the
// spool file: two gateways on one host need a spool each.
var ErrSpoolLocked = errors.New("outcomes: the spool file is in use by another process")

// Spool keeps, in order, the records the database refused, until the
// Writer writes them: in a file (OpenSpool), so that they survive a
// restart, or in memory (NewMemorySpool). It holds at most its bound in
// bytes; a record past it is refused. Only the Writer's goroutine uses
// it.
type Spool struct {
	f    *os.File // nil: in memory
	mem  []byte
	path string
	max  int64
	// size is the bytes held; off the bytes at its start already written
	// to the database; n the records after off.
	size, off int64
	n         int
}

// OpenSpool opens (creating it and its directory) the spool file at path,
// bounded by maxBytes (zero: DefaultSpoolMaxBytes), and locks it. Records
// a previous process left in it are kept, to be replayed: the store skips
// those already written. A last line cut short (a process killed while
// writing it) is cut off.
func OpenSpool(path string, maxBytes int64) (*Spool, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultSpoolMaxBytes
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("outcomes: spool: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("outcomes: spool: %w", err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		if errors.Is(err, ErrSpoolLocked) {
			return nil, fmt.Errorf("%w: %s", ErrSpoolLocked, path)
		}
		return nil, fmt.Errorf("outcomes: spool: lock %s: %w", path, err)
	}
	s := &Spool{f: f, path: path, max: maxBytes}
	if err := s.load(); err != nil {
		f.Close()
		return nil, fmt.Errorf("outcomes: spool: %w", err)
	}
	return s, nil
}

// NewMemorySpool returns a spool in memory bounded by maxBytes (zero:
// DefaultSpoolMaxBytes), for a gateway with no place for a file: its
// records are lost if the process stops before the database is back.
func NewMemorySpool(maxBytes int64) *Spool {
	if maxBytes <= 0 {
		maxBytes = DefaultSpoolMaxBytes
	}
	return &Spool{max: maxBytes}
}

// load counts the complete lines of the file and cuts a partial last one.
func (s *Spool) load() error {
	r := bufio.NewReader(s.f)
	var good int64
	for {
		line, err := r.ReadBytes('\n')
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		good += int64(len(line))
		s.n++
	}
	if err := s.f.Truncate(good); err != nil {
		return err
	}
	s.size = good
	return nil
}

// Path is the spool file's path; "" for a spool in memory.
func (s *Spool) Path() string { return s.path }

// Len is the number of records the spool holds.
func (s *Spool) Len() int { return s.n }

// Bytes is the spool's size in bytes (its file's size).
func (s *Spool) Bytes() int64 { return s.size }

// Append adds records at the end, in order, while they fit in the bound,
// and returns how many it took; the rest are refused. An error (a full
// disk) takes none of the records it was writing.
func (s *Spool) Append(records []Record) (int, error) {
	var buf bytes.Buffer
	took := 0
	for _, r := range records {
		line, err := json.Marshal(r)
		if err != nil {
			return took, err
		}
		if s.size+int64(buf.Len()+len(line)+1) > s.max {
			break
		}
		buf.Write(line)
		buf.WriteByte('\n')
		took++
	}
	if buf.Len() == 0 {
		return 0, nil
	}
	if s.f == nil {
		s.mem = append(s.mem, buf.Bytes()...)
	} else if _, err := s.f.WriteAt(buf.Bytes(), s.size); err != nil {
		// Cut what was partly written: the next Append starts at size.
		s.f.Truncate(s.size)
		return 0, err
	}
	s.size += int64(buf.Len())
	s.n += took
	return took, nil
}

// Mark is how much of the spool's start a Peek read: what Advance drops
// once its records are written.
type Mark struct {
	bytes int64
	lines int
}

// Empty reports whether the Peek read nothing: the spool is empty.
func (m Mark) Empty() bool { return m.lines == 0 }

// Peek returns up to max records from the start of the spool, oldest
// first, and the Mark to Advance by once they are written. A line that
// does not decode (the file edited by hand) is skipped.
func (s *Spool) Peek(max int) ([]Record, Mark, error) {
	var r io.Reader
	if s.f == nil {
		r = bytes.NewReader(s.mem[s.off:s.size])
	} else {
		r = io.NewSectionReader(s.f, s.off, s.size-s.off)
	}
	br := bufio.NewReader(r)
	var out []Record
	var m Mark
	for m.lines < max {
		line, err := br.ReadBytes('\n')
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, Mark{}, err
		}
		m.bytes += int64(len(line))
		m.lines++
		var rec Record
		if json.Unmarshal(line, &rec) == nil {
			out = append(out, rec)
		}
	}
	return out, m, nil
}

// Advance drops what a Peek read, once its records are written. An
// emptied spool is truncated.
func (s *Spool) Advance(m Mark) error {
	s.off += m.bytes
	s.n -= m.lines
	if s.off < s.size {
		return nil
	}
	s.off, s.size, s.n = 0, 0, 0
	s.mem = s.mem[:0]
	if s.f != nil {
		return s.f.Truncate(0)
	}
	return nil
}

// Close closes the spool's file, keeping what it holds for the next
// process.
func (s *Spool) Close() error {
	if s.f == nil {
		return nil
	}
	return s.f.Close()
}
