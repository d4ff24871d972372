// The prefetch hint is a static inline function in the header; this file
// gives the target the one source file a C target needs.
#include "lens_prefetch.h"
