/* Finding Go runtimes where there is no ELF note (Windows, macOS): every Go
 * binary carries its build information, a 32-byte header starting with the
 * magic "\xff Go buildinf:" at a 16-byte boundary of its data (the Go
 * linker's .go.buildinfo; Mach-O __DATA,__go_buildinfo), then, with flag 2,
 * the Go version as a length-prefixed string (Go 1.18 and later). */
#ifndef GODLPACK_GOIMAGE_H_
#define GODLPACK_GOIMAGE_H_

#include <stddef.h>

/* 1 when the n bytes at p hold a Go build-information header; then version
 * is its Go version ("" when not inline). 0 otherwise. */
int gdl_go_buildinfo(const unsigned char* p, size_t n, char* version, size_t cap);

#endif
