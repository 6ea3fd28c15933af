package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// writeStatus replaces DIR/status with one line, atomically (a reader sees the old line or the
// new one, never a partial write).
func writeStatus(root, line string) error {
	tmp, err := os.CreateTemp(root, ".status-*")
	if err != nil {
		return fmt.Errorf("writing the status file in %s: %w", root, err)
	}
	if _, err := tmp.WriteString(oneLine(line) + "\n"); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("writing the status file in %s: %w", root, err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing the status file in %s: %w", root, err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(root, "status")); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing the status file in %s: %w", root, err)
	}
	return nil
}

// oneLine folds a message onto one line, for the status file.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
