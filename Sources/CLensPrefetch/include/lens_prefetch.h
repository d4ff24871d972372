#ifndef LENSDB_PREFETCH_H
#define LENSDB_PREFETCH_H

/// Asks the CPU to start loading the two cache lines at `address` (the
/// first 128 bytes of an object) for reading. A hint: it never faults and
/// changes nothing a program can see but time. C because Swift has no
/// spelling for the compiler's prefetch builtin.
static inline void lens_prefetch_object(const void *address) {
    __builtin_prefetch(address, 0, 3);
    __builtin_prefetch((const char *)address + 64, 0, 3);
}

#endif
