// Declarations of the stubs in unimplemented_functions.cpp that no SDK header declares (musa-stubgen).
#pragma once

// musa-stubgen: begin generated declarations
#include <musa_runtime_api.h>

#ifndef __host__
#define __host__
#endif

// musa-stubgen: end generated declarations
