//go:build windows || darwin

/* goimage.h: reads a Go binary's build-information header in memory. */
#include <string.h>
#include "goimage.h" /* no Python here: tests/tooling/test_platforms.py compiles this file alone */

const char* gdl_go_version = ""; /* set by cgo.go's init: runtime.Version() (sigchain.c on Linux) */

/* The magic without its first byte, 0xff, which is compared apart: so the
 * whole magic never appears in this library's own read-only data. */
static const char magic_tail[] = " Go buildinf:"; /* 13 bytes */

int gdl_go_buildinfo(const unsigned char* p, size_t n, char* version, size_t cap) {
  version[0] = 0;
  for (size_t off = 0; off + 32 <= n; off += 16) {
    if (p[off] != 0xff || memcmp(p + off + 1, magic_tail, 13) != 0) continue;
    const unsigned char* h = p + off;
    if (h[15] & 2) { /* inline strings: uvarint length, then the version */
      size_t len = 0, i = 32;
      for (int shift = 0; off + i < n && shift < 28; shift += 7) {
        unsigned char b = h[i++];
        len |= (size_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) break;
      }
      if (off + i + len <= n && len < cap) {
        memcpy(version, h + i, len);
        version[len] = 0;
      }
    }
    return 1;
  }
  return 0;
}
