// Package vendored checks third-party files embedded in the binary (browser builds from the npm
// registry, say) against the SHA256SUMS their refresh script wrote beside them, so a hand edit or
// a partial refresh cannot ship.
package vendored

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
)

// SumsFile, in a directory of vendored files, lists the sha256 of each, as sha256sum writes it.
const SumsFile = "SHA256SUMS"

// Sums reads the SumsFile in dir: file name to hex sum.
func Sums(fsys fs.FS, dir string) (map[string]string, error) {
	content, err := fs.ReadFile(fsys, path.Join(dir, SumsFile))
	if err != nil {
		return nil, err
	}
	sums := map[string]string{}
	scanner := bufio.NewScanner(bytes.NewReader(content))
	for scanner.Scan() {
		sum, name, ok := strings.Cut(scanner.Text(), "  ")
		if !ok || len(sum) != 64 {
			return nil, fmt.Errorf("malformed %s line %q", path.Join(dir, SumsFile), scanner.Text())
		}
		sums[name] = sum
	}
	return sums, scanner.Err()
}

// Verify checks that the SumsFile in dir lists every other file there with its sum, and no file
// that is missing. Its error says to run refresh, the script that rewrites them.
func Verify(fsys fs.FS, dir, refresh string) error {
	if err := verify(fsys, dir); err != nil {
		return fmt.Errorf("%w: run %s", err, refresh)
	}
	return nil
}

func verify(fsys fs.FS, dir string) error {
	sums, err := Sums(fsys, dir)
	if err != nil {
		return err
	}
	err = fs.WalkDir(fsys, dir, func(name string, entry fs.DirEntry, err error) error {
		if err != nil || entry.IsDir() || name == path.Join(dir, SumsFile) {
			return err
		}
		content, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		listed := strings.TrimPrefix(name, dir+"/")
		sum := sha256.Sum256(content)
		if sums[listed] != hex.EncodeToString(sum[:]) {
			return fmt.Errorf("%s does not match %s", name, SumsFile)
		}
		delete(sums, listed)
		return nil
	})
	if err != nil {
		return err
	}
	// What is left is listed but not there.
	if len(sums) > 0 {
		return fmt.Errorf("%s lists missing files: %s", path.Join(dir, SumsFile), strings.Join(slices.Sorted(maps.Keys(sums)), ", "))
	}
	return nil
}
