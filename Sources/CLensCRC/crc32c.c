// CRC32C for LensDB's record and snapshot checksums.
//
// Why C: Swift has no portable spelling of the SSE4.2 / ARMv8 CRC intrinsics,
// and the checksum runs over every byte LensDB writes or reads. The portable
// path is a slicing-by-8 table walk; the tables are built once, under
// pthread_once, so concurrent first calls are safe.

#include "lens_crc32c.h"

#include <pthread.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#elif defined(__aarch64__) && defined(__APPLE__)
#include <sys/sysctl.h>  // Darwin has no getauxval; it names CPU features in sysctl
#elif defined(__aarch64__)
#include <sys/auxv.h>
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7)
#endif
#endif

static const uint32_t kPolynomial = 0x82F63B78u;  // reflected Castagnoli
static uint32_t table[8][256];
static int hardware = 0;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void initialize(void) {
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ kPolynomial : c >> 1;
        table[0][n] = c;
    }
    for (uint32_t n = 0; n < 256; n++) {
        for (int s = 1; s < 8; s++) table[s][n] = (table[s - 1][n] >> 8) ^ table[0][table[s - 1][n] & 0xFF];
    }
#if defined(__x86_64__)
    unsigned int eax, ebx, ecx, edx;
    if (__get_cpuid(1, &eax, &ebx, &ecx, &edx)) hardware = (ecx & bit_SSE4_2) != 0;
#elif defined(__aarch64__) && defined(__APPLE__)
    int present = 0;
    size_t size = sizeof(present);
    hardware = sysctlbyname("hw.optional.armv8_crc32", &present, &size, NULL, 0) == 0 && present != 0;
#elif defined(__aarch64__)
    hardware = (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0;
#endif
}

static uint32_t portable(uint32_t state, const uint8_t *p, size_t n) {
    while (n >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);  // unaligned-safe; the tables assume little-endian words
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        word = __builtin_bswap64(word);
#endif
        uint32_t lo = (uint32_t)word ^ state, hi = (uint32_t)(word >> 32);
        state = table[7][lo & 0xFF] ^ table[6][(lo >> 8) & 0xFF] ^ table[5][(lo >> 16) & 0xFF] ^
                table[4][lo >> 24] ^ table[3][hi & 0xFF] ^ table[2][(hi >> 8) & 0xFF] ^
                table[1][(hi >> 16) & 0xFF] ^ table[0][hi >> 24];
        p += 8;
        n -= 8;
    }
    while (n--) state = (state >> 8) ^ table[0][(state ^ *p++) & 0xFF];
    return state;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2")))
static uint32_t accelerated(uint32_t state, const uint8_t *p, size_t n) {
    uint64_t wide = state;
    while (n >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        wide = __builtin_ia32_crc32di(wide, word);
        p += 8;
        n -= 8;
    }
    uint32_t narrow = (uint32_t)wide;
    while (n--) narrow = __builtin_ia32_crc32qi(narrow, *p++);
    return narrow;
}
#elif defined(__aarch64__)
__attribute__((target("crc")))
static uint32_t accelerated(uint32_t state, const uint8_t *p, size_t n) {
    while (n >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        state = __builtin_arm_crc32cd(state, word);
        p += 8;
        n -= 8;
    }
    while (n--) state = __builtin_arm_crc32cb(state, *p++);
    return state;
}
#else
static uint32_t accelerated(uint32_t state, const uint8_t *p, size_t n) { return portable(state, p, n); }
#endif

uint32_t lens_crc32c_extend_portable(uint32_t crc, const void *data, size_t length) {
    pthread_once(&once, initialize);
    return ~portable(~crc, (const uint8_t *)data, length);
}

uint32_t lens_crc32c_extend(uint32_t crc, const void *data, size_t length) {
    pthread_once(&once, initialize);
    const uint8_t *p = (const uint8_t *)data;
    return hardware ? ~accelerated(~crc, p, length) : ~portable(~crc, p, length);
}

int lens_crc32c_uses_hardware(void) {
    pthread_once(&once, initialize);
    return hardware;
}
