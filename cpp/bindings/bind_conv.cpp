// bind_conv.cpp: Python bindings of the conv kernels (see fkeras/kernels.h).
#include "check.h"

void bind_conv(py::module_& m) { (void)m; }
