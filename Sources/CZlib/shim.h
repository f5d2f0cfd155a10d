#include <zlib.h>

/// inflateInit2 and deflateInit2 are macros; these wrappers make them callable from Swift.
static inline int czlib_inflate_init2(z_streamp stream, int window_bits) {
    return inflateInit2(stream, window_bits);
}
static inline int czlib_deflate_init2(z_streamp stream, int level, int window_bits) {
    return deflateInit2(stream, level, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY);
}
