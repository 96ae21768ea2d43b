// bind_rnn.cpp: Python bindings of the rnn kernels (see fkeras/kernels.h).
#include "check.h"

void bind_rnn(py::module_& m) { (void)m; }
