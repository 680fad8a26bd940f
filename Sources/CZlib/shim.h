// Forward-only shims for zlib macros Swift cannot import (`pinproxy tail`
// reads logrotate's .gz files). Rule: one-line forwards named shim_<C name>.
#ifndef PINPROXY_CZLIB_SHIM_H
#define PINPROXY_CZLIB_SHIM_H

#include <zlib.h>

/// inflateInit2 is a macro passing ZLIB_VERSION and the stream size.
static inline int shim_inflateInit2(z_streamp stream, int windowBits) { return inflateInit2(stream, windowBits); }

#endif
