//go:build !windows

package pathclock

// separators are the characters that end a path element.
const separators = "/"
