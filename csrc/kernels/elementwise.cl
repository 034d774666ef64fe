// Prelude of every generated pointwise kernel (see csrc/aten/Pointwise.h): helper functions
// that pointwise expressions call. The kernels themselves are generated per expression.
#include "common.clh"

