package winshim

import "testing"

func TestAbsWindows(t *testing.T) {
	for dir, want := range map[string]bool{
		`C:\Windows`: true, `c:/x`: true, `\\host\share`: true, `//host/share`: true,
		`.`: false, `.\`: false, `node_modules\.bin`: false, `..\tools`: false, ``: false, `C:x`: false, `\x`: false, `\\\x`: false,
	} {
		if got := absWindows(dir); got != want {
			t.Errorf("absWindows(%q) = %v, want %v", dir, got, want)
		}
	}
}
