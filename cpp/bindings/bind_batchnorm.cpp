// bind_batchnorm.cpp: Python bindings of the batchnorm kernels (see fkeras/kernels.h).
#include "check.h"

void bind_batchnorm(py::module_& m) { (void)m; }
