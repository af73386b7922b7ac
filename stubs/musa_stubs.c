/* The stub runtime as a library (MusaLinkcheck::stubs): the implementation lives in the header. */
#define MUSA_STUBS_LIBRARY
#define MUSA_STUBS_IMPLEMENTATION
#include "musa_stubs.h"
