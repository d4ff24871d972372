#ifndef LENSDB_CLZ4_SHIM_H
#define LENSDB_CLZ4_SHIM_H
// Debian's liblz4-dev installs lz4.h; LensDB uses only the block API
// (LZ4_compress_default, LZ4_decompress_safe, LZ4_compressBound).
#include <lz4.h>
#endif
