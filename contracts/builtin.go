package contracts

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
)

// builtinFS holds the built-in contracts, one directory each.
//
//go:embed all:builtin
var builtinFS embed.FS

// LoadDir loads every contract directory (a directory holding contract.json)
// directly below root in fsys. Two directories that define the same
// name@version are an error: which one would win is not the user's choice.
func LoadDir(fsys fs.FS, root string) ([]*Contract, error) {
	return loadDir(fsys, root, "")
}

// loadDir is LoadDir; base is the directory fsys stands for on disk, for
// messages (see load). It loads every directory, however many fail, and
// returns the contracts that loaded with every problem of the others.
func loadDir(fsys fs.FS, root, base string) ([]*Contract, error) {
	entries, err := fs.ReadDir(fsys, root)
	if err != nil {
		return nil, err
	}
	var out []*Contract
	var errs []error
	dirOf := map[string]string{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := path.Join(root, e.Name())
		if _, err := fs.Stat(fsys, dir+"/contract.json"); err != nil {
			continue
		}
		c, err := load(fsys, dir, base)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if first, ok := dirOf[c.ID()]; ok {
			errs = append(errs, fmt.Errorf("contract %s defined twice, in %s and %s", c.ID(), displayPath(base, first), displayPath(base, dir)))
			continue
		}
		dirOf[c.ID()] = dir
		out = append(out, c)
	}
	return out, errors.Join(errs...)
}

// Builtins loads the embedded contracts. An error here is a defect of the
// binary, caught by the package's tests.
func Builtins() ([]*Contract, error) {
	cs, err := LoadDir(builtinFS, "builtin")
	for _, c := range cs {
		c.Builtin = true
	}
	return cs, err
}

// LoadRegistry returns the built-in contracts plus those of userDir (if not
// empty); a user contract with the same name@version replaces the built-in.
// When some user contracts do not load, the error reports every one and
// the registry holds the others, so that a caller may check what refers
// to them too.
func LoadRegistry(userDir string) (*Registry, error) {
	r := NewRegistry()
	cs, err := Builtins()
	if err != nil {
		return nil, fmt.Errorf("built-in contracts: %w", err)
	}
	for _, c := range cs {
		if err := r.Add(c, false); err != nil {
			return nil, err
		}
	}
	if userDir == "" {
		return r, nil
	}
	us, err := loadDir(os.DirFS(userDir), ".", userDir)
	for _, c := range us {
		if err := r.Add(c, true); err != nil {
			return nil, err
		}
	}
	return r, err
}

// LoadPath loads the contracts of dir on disk: dir itself when it holds a
// contract.json, else every contract directory directly below it. Like
// LoadDir it loads all it can and reports every problem of the rest, each
// naming its file by its path on disk.
func LoadPath(dir string) ([]*Contract, error) {
	fsys := os.DirFS(dir)
	if _, err := fs.Stat(fsys, "contract.json"); err == nil {
		c, err := load(fsys, ".", dir)
		if err != nil {
			return nil, err
		}
		return []*Contract{c}, nil
	}
	return loadDir(fsys, ".", dir)
}
