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
		c, err := Load(fsys, dir)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if first, ok := dirOf[c.ID()]; ok {
			errs = append(errs, fmt.Errorf("contract %s defined twice, in %s and %s", c.ID(), first, dir))
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
	us, err := LoadDir(os.DirFS(userDir), ".")
	if err != nil {
		return nil, fmt.Errorf("contracts in %s: %w", userDir, err)
	}
	for _, c := range us {
		if err := r.Add(c, true); err != nil {
			return nil, err
		}
	}
	return r, nil
}
