// bind_optimizers.cpp: Python bindings of the optimizers kernels (see fkeras/kernels.h).
#include "check.h"

void bind_optimizers(py::module_& m) { (void)m; }
