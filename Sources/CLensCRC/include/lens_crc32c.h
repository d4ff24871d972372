#ifndef LENSDB_CRC32C_H
#define LENSDB_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/// Extends a CRC32C (Castagnoli, reflected, polynomial 0x82F63B78) over `length`
/// bytes. `crc` is a finished checksum of the bytes before (0 for none), so
/// `extend(extend(0, a), b) == extend(0, a ++ b)`.
/// Uses the SSE4.2 or ARMv8 CRC instruction when the CPU has it, else a
/// portable slicing-by-8 table walk. Thread-safe.
uint32_t lens_crc32c_extend(uint32_t crc, const void *data, size_t length);

/// The portable implementation alone, so tests can check it against the
/// hardware path on the same input.
uint32_t lens_crc32c_extend_portable(uint32_t crc, const void *data, size_t length);

/// 1 when `lens_crc32c_extend` uses a CPU instruction, else 0.
int lens_crc32c_uses_hardware(void);

#endif
