// fkeras._eager: the eager fast path of the common elementwise ops and indexing (issue 12:
// an op call on a small array costs within 2x of the NumPy call it wraps).
//
// The Python op functions (fkeras.ops.add, Tensor.__add__, ...) pay ~2 us of dispatch per call
// (dtype promotion, registry, device, tape) over NumPy's ~0.3 us on an 8x8 array. Most calls
// in user code need none of it: no tape records, the device is the default cpu, the operands
// are float32 buffers. For those calls the objects defined here run the NumPy ufunc directly
// and wrap its result, and hand every other call, unchanged, to the op's Python function
// (the "slow" path, which stays the definition of the semantics).
//
// A call takes the fast path only when all of these hold, each a few loads here:
// - no GradientTape (or stop_recording / device scope) is open on this thread: Python keeps
//   the per-thread count `blocked` (enter_slow / exit_slow), and the default device is the cpu
//   (set_default_fast);
// - every operand is a NumPy array or a fkeras.Tensor (exact types) holding a C-contiguous
//   float32 array, or a Python float / int (not bool) beside one, with at least one operand
//   of rank >= 1 (so the ufunc returns an array; NumPy 1's value-based casting then keeps
//   float32 as the slow path does, and a float beyond float32's range takes the slow path);
// - the ufunc returns an exact ndarray (anything else, an exception included, is discarded
//   and the slow path runs the call again, so its errors and results are the ones users get).
// The result is the ufunc's array, wrapped in a Tensor unless the thread is in array mode
// (fkeras-internal code, engine/tensor.py), whose flag lives here so that both sides read one
// place.
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include <cfloat>
#include <cmath>

namespace {

// Per-thread state: array mode (engine/tensor.py's _MODE.array) and the count of open scopes
// in which every op must take its Python path (tapes, stop_recording, device scopes).
struct ThreadState {
  int array_mode = 0;
  int blocked = 0;
};
thread_local ThreadState t_state;

// Process-wide: the default device is the cpu; configure() passed its self-check.
int g_default_fast = 1;
int g_ready = 0;
PyTypeObject* g_ndarray = nullptr;
PyTypeObject* g_tensor = nullptr;
PyObject* g_float32 = nullptr;   // np.dtype("float32")
PyObject* g_index_dtypes[4] = {nullptr, nullptr, nullptr, nullptr};  // + int32, int64, bool
Py_ssize_t g_value_offset = -1;  // offset of Tensor's `_value` slot
// For apply(): the cpu Device, NumPy's scalar base type, np.asarray, the Python apply.
PyObject* g_cpu_device = nullptr;
PyObject* g_generic = nullptr;
PyObject* g_asarray = nullptr;
PyObject* g_ascontiguous = nullptr;  // np.ascontiguousarray
PyObject* g_apply_fallback = nullptr;
PyObject* g_forward_name = nullptr;  // "forward"

// The head of NumPy's PyArrayObject (PyArrayObject_fields, the same since NumPy 1.7 and in
// NumPy 2). configure() checks it on a probe array before enabling anything.
struct ArrayHead {
  PyObject_HEAD
  char* data;
  int nd;
  Py_ssize_t* dimensions;
  Py_ssize_t* strides;
  PyObject* base;
  PyObject* descr;
  int flags;
};
constexpr int kCContiguous = 0x0001;  // NPY_ARRAY_C_CONTIGUOUS

inline bool fast_enabled() { return g_ready && g_default_fast && t_state.blocked == 0; }

// The buffer of `x` when it is an exact ndarray, or an exact Tensor holding one; else null.
inline PyObject* buffer_of(PyObject* x) {
  if (Py_TYPE(x) == g_ndarray) return x;
  if (Py_TYPE(x) == g_tensor) {
    PyObject* v = *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(x) + g_value_offset);
    if (v != nullptr && Py_TYPE(v) == g_ndarray) return v;
  }
  return nullptr;
}

inline ArrayHead* head(PyObject* a) { return reinterpret_cast<ArrayHead*>(a); }

inline bool is_f32_contiguous(PyObject* a) {
  return head(a)->descr == g_float32 && (head(a)->flags & kCContiguous);
}

// A Python float or int operand that float32 arithmetic takes as NumPy and the slow path do.
inline bool is_weak_scalar(PyObject* x) {
  if (PyFloat_CheckExact(x)) {
    const double v = PyFloat_AS_DOUBLE(x);
    return std::isnan(v) || std::isinf(v) || std::fabs(v) <= FLT_MAX;
  }
  if (!PyLong_CheckExact(x)) return false;
  int overflow = 0;  // beyond int64, NumPy 1 would make an object array: the slow path decides
  PyLong_AsLongLongAndOverflow(x, &overflow);
  if (PyErr_Occurred()) {
    PyErr_Clear();
    return false;
  }
  return overflow == 0;
}

// The result for the caller: the array in array mode, else a new Tensor holding it.
PyObject* finish(PyObject* result) {
  if (t_state.array_mode) return result;
  PyObject* t = g_tensor->tp_alloc(g_tensor, 0);
  if (t == nullptr) {
    Py_DECREF(result);
    return nullptr;
  }
  *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(t) + g_value_offset) = result;
  return t;
}

// Runs `ufunc(args...)` on the buffers; null (no error set) when the result is not a plain
// array or the ufunc raised (the slow path then runs the call and reports).
PyObject* run_ufunc(PyObject* ufunc, PyObject* const* args, Py_ssize_t n) {
  PyObject* r = PyObject_Vectorcall(ufunc, args, n, nullptr);
  if (r == nullptr) {
    PyErr_Clear();
    return nullptr;
  }
  if (Py_TYPE(r) != g_ndarray) {
    Py_DECREF(r);
    return nullptr;
  }
  return r;
}

// ---- FastOp: a callable with a NumPy ufunc, a Python fallback and a calling convention ----
enum Kind { kUnary = 0, kBinary = 1, kBinaryReflected = 2, kGetItem = 3 };

struct FastOp {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  PyObject* ufunc;     // the NumPy ufunc (None for getitem)
  PyObject* fallback;  // the op's Python function, called with the operands in op order
  PyObject* dict;      // __name__, __doc__, ... set from Python
  int kind;
};

PyObject* call_fallback(FastOp* op, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  const Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  if (op->kind == kBinaryReflected && n == 2 && kwnames == nullptr) {
    PyObject* swapped[2] = {args[1], args[0]};
    return PyObject_Vectorcall(op->fallback, swapped, 2, nullptr);
  }
  return PyObject_Vectorcall(op->fallback, args, nargsf, kwnames);
}

PyObject* try_unary(FastOp* op, PyObject* x) {
  PyObject* a = buffer_of(x);
  if (a == nullptr || !is_f32_contiguous(a) || head(a)->nd < 1) return nullptr;
  PyObject* r = run_ufunc(op->ufunc, &a, 1);
  return r ? finish(r) : nullptr;
}

PyObject* try_binary(FastOp* op, PyObject* x1, PyObject* x2) {
  PyObject* a = buffer_of(x1);
  PyObject* b = buffer_of(x2);
  if (a != nullptr && !is_f32_contiguous(a)) return nullptr;
  if (b != nullptr && !is_f32_contiguous(b)) return nullptr;
  if (a == nullptr && b == nullptr) return nullptr;
  if (a == nullptr) {
    if (!is_weak_scalar(x1) || head(b)->nd < 1) return nullptr;
    a = x1;
  } else if (b == nullptr) {
    if (!is_weak_scalar(x2) || head(a)->nd < 1) return nullptr;
    b = x2;
  } else if (head(a)->nd < 1 && head(b)->nd < 1) {
    return nullptr;
  }
  PyObject* args[2] = {a, b};
  PyObject* r = run_ufunc(op->ufunc, args, 2);
  return r ? finish(r) : nullptr;
}

bool is_basic_index(PyObject* k) {
  return PyLong_CheckExact(k) || PySlice_Check(k) || k == Py_None || k == Py_Ellipsis;
}

bool is_index_dtype(PyObject* descr) {
  for (PyObject* d : g_index_dtypes)
    if (d != nullptr && d == descr) return true;
  return false;
}

// x[key] for an int, slice, None, Ellipsis or a tuple of those: the view, or a C-contiguous
// copy of it, as the getitem op gives (a result that is x itself or not an array, such as a
// NumPy scalar, takes the Python path).
PyObject* try_getitem(PyObject* x, PyObject* key) {
  PyObject* a = buffer_of(x);
  if (a == nullptr || !is_index_dtype(head(a)->descr)) return nullptr;
  if (PyTuple_CheckExact(key)) {
    const Py_ssize_t n = PyTuple_GET_SIZE(key);
    for (Py_ssize_t i = 0; i < n; ++i)
      if (!is_basic_index(PyTuple_GET_ITEM(key, i))) return nullptr;
  } else if (!is_basic_index(key)) {
    return nullptr;
  }
  PyObject* r = PyObject_GetItem(a, key);
  if (r == nullptr) {
    PyErr_Clear();
    return nullptr;
  }
  if (Py_TYPE(r) != g_ndarray || r == a) {
    Py_DECREF(r);
    return nullptr;
  }
  if (!(head(r)->flags & kCContiguous)) {
    if (g_ascontiguous == nullptr) {
      Py_DECREF(r);
      return nullptr;
    }
    PyObject* c = PyObject_Vectorcall(g_ascontiguous, &r, 1, nullptr);
    Py_DECREF(r);
    if (c == nullptr) PyErr_Clear();
    if (c == nullptr || Py_TYPE(c) != g_ndarray) {
      Py_XDECREF(c);
      return nullptr;
    }
    r = c;
  }
  return finish(r);
}

PyObject* fastop_vectorcall(PyObject* self, PyObject* const* args, size_t nargsf,
                            PyObject* kwnames) {
  FastOp* op = reinterpret_cast<FastOp*>(self);
  const Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  if (kwnames == nullptr && fast_enabled()) {
    PyObject* r = nullptr;
    switch (op->kind) {
      case kUnary:
        if (n == 1) r = try_unary(op, args[0]);
        break;
      case kBinary:
        if (n == 2) r = try_binary(op, args[0], args[1]);
        break;
      case kBinaryReflected:
        if (n == 2) r = try_binary(op, args[1], args[0]);
        break;
      case kGetItem:
        if (n == 2) r = try_getitem(args[0], args[1]);
        break;
    }
    if (r != nullptr || PyErr_Occurred()) return r;
  }
  return call_fallback(op, args, nargsf, kwnames);
}

int fastop_init(PyObject* self, PyObject* args, PyObject* kwds) {
  static const char* names[] = {"ufunc", "fallback", "kind", nullptr};
  PyObject *ufunc, *fallback;
  int kind;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOi:FastOp", const_cast<char**>(names), &ufunc,
                                   &fallback, &kind))
    return -1;
  if (kind < kUnary || kind > kGetItem) {
    PyErr_Format(PyExc_ValueError, "FastOp: kind must be 0..3, received %d", kind);
    return -1;
  }
  if (!PyCallable_Check(fallback) || (kind != kGetItem && !PyCallable_Check(ufunc))) {
    PyErr_SetString(PyExc_TypeError, "FastOp: ufunc and fallback must be callable");
    return -1;
  }
  FastOp* op = reinterpret_cast<FastOp*>(self);
  Py_INCREF(ufunc);
  Py_INCREF(fallback);
  Py_XSETREF(op->ufunc, ufunc);
  Py_XSETREF(op->fallback, fallback);
  op->kind = kind;
  op->vectorcall = fastop_vectorcall;
  return 0;
}

// Bound as a method when stored on a class (Tensor.__add__), as a Python function would be.
PyObject* fastop_descr_get(PyObject* self, PyObject* obj, PyObject*) {
  if (obj == nullptr || obj == Py_None) {
    Py_INCREF(self);
    return self;
  }
  return PyMethod_New(self, obj);
}

int fastop_traverse(PyObject* self, visitproc visit, void* arg) {
  FastOp* op = reinterpret_cast<FastOp*>(self);
  Py_VISIT(op->ufunc);
  Py_VISIT(op->fallback);
  Py_VISIT(op->dict);
  return 0;
}

int fastop_clear(PyObject* self) {
  FastOp* op = reinterpret_cast<FastOp*>(self);
  Py_CLEAR(op->ufunc);
  Py_CLEAR(op->fallback);
  Py_CLEAR(op->dict);
  return 0;
}

void fastop_dealloc(PyObject* self) {
  PyObject_GC_UnTrack(self);
  fastop_clear(self);
  Py_TYPE(self)->tp_free(self);
}

// Pickles by reference, as a function does: the name the module holds it under.
PyObject* fastop_reduce(PyObject* self, PyObject*) {
  PyObject* name = PyObject_GetAttrString(self, "__qualname__");
  if (name == nullptr) {
    PyErr_Clear();
    name = PyObject_GetAttrString(self, "__name__");
  }
  return name;
}

PyMethodDef fastop_methods[] = {
    {"__reduce__", fastop_reduce, METH_NOARGS, "Pickled by name, as a function."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef fastop_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyTypeObject FastOpType = {PyVarObject_HEAD_INIT(nullptr, 0)};

// ---- the mode flag object: engine/tensor.py's `_MODE` (`_MODE.array` reads and writes) ----
struct ModeState {
  PyObject_HEAD
};

PyObject* mode_get_array(PyObject*, void*) { return PyBool_FromLong(t_state.array_mode); }

int mode_set_array(PyObject*, PyObject* value, void*) {
  if (value == nullptr) {
    PyErr_SetString(PyExc_AttributeError, "the array-mode flag cannot be deleted");
    return -1;
  }
  const int v = PyObject_IsTrue(value);
  if (v < 0) return -1;
  t_state.array_mode = v;
  return 0;
}

PyGetSetDef mode_getset[] = {
    {"array", mode_get_array, mode_set_array, "True while fkeras-internal code runs.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyTypeObject ModeStateType = {PyVarObject_HEAD_INIT(nullptr, 0)};


// ---- apply(op, *inputs, **attrs): registry.apply's eager path for plain buffers ----
// The inputs must be plain buffers that registry._to_array passes on unchanged (C-contiguous
// float32, any int32 / int64 / bool array, or None); anything else runs registry.apply.
// The op's own forward then runs on the cpu device, once (random ops advance their seed
// state), and its outputs are handled as apply handles them: a NumPy scalar becomes a 0-d
// array, an output that is one of the inputs becomes a view of it (the tape keys on
// identity), a tuple is handled item by item, a list is wrapped as it is; each wrapped in a
// Tensor outside array mode. An exception from the forward propagates as apply's would.
bool apply_input_ok(PyObject* x, PyObject** out) {
  if (x == Py_None) {
    *out = x;
    return true;
  }
  PyObject* a = buffer_of(x);
  if (a == nullptr) return false;
  PyObject* d = head(a)->descr;
  if (d == g_float32 ? !(head(a)->flags & kCContiguous) : !is_index_dtype(d)) return false;
  *out = a;
  return true;
}

// registry._unaliased: a new reference.
PyObject* unaliased(PyObject* o, PyObject* const* inputs, Py_ssize_t n) {
  if (Py_TYPE(o) != g_ndarray && PyObject_TypeCheck(o, reinterpret_cast<PyTypeObject*>(g_generic)))
    return PyObject_Vectorcall(g_asarray, &o, 1, nullptr);
  for (Py_ssize_t i = 0; i < n; ++i)
    if (inputs[i] == o) return PyObject_CallMethod(o, "view", nullptr);
  Py_INCREF(o);
  return o;
}

PyObject* wrap_outputs(PyObject* outputs, PyObject* const* inputs, Py_ssize_t n) {
  const bool is_tuple = PyTuple_CheckExact(outputs);
  if (!is_tuple && !PyList_CheckExact(outputs)) {
    PyObject* o = unaliased(outputs, inputs, n);
    return o ? finish(o) : nullptr;
  }
  const Py_ssize_t m = PySequence_Fast_GET_SIZE(outputs);
  if (t_state.array_mode && !is_tuple) {
    Py_INCREF(outputs);
    return outputs;
  }
  PyObject* res = is_tuple ? PyTuple_New(m) : PyList_New(m);
  if (res == nullptr) return nullptr;
  for (Py_ssize_t i = 0; i < m; ++i) {
    PyObject* item = PySequence_Fast_GET_ITEM(outputs, i);
    PyObject* o;
    if (is_tuple) {
      o = unaliased(item, inputs, n);
    } else {
      Py_INCREF(item);
      o = item;
    }
    if (o == nullptr || (o = finish(o)) == nullptr) {
      Py_DECREF(res);
      return nullptr;
    }
    if (is_tuple) PyTuple_SET_ITEM(res, i, o);
    else PyList_SET_ITEM(res, i, o);
  }
  return res;
}

constexpr Py_ssize_t kMaxApplyInputs = 8;
constexpr Py_ssize_t kMaxApplyAttrs = 16;

// The result, or null with an error set (the forward raised), or null without one (the
// inputs are not plain buffers: registry.apply decides; the forward has not run).
PyObject* try_apply(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  const Py_ssize_t n = nargs - 1;  // inputs after the op
  const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  if (n < 0 || n > kMaxApplyInputs || nkw > kMaxApplyAttrs || g_cpu_device == nullptr)
    return nullptr;
  // [op, dev, inputs..., attr values...] for op.forward(dev, *inputs, **attrs)
  PyObject* call[2 + kMaxApplyInputs + kMaxApplyAttrs];
  call[0] = args[0];
  call[1] = g_cpu_device;
  for (Py_ssize_t i = 0; i < n; ++i)
    if (!apply_input_ok(args[1 + i], &call[2 + i])) return nullptr;
  for (Py_ssize_t i = 0; i < nkw; ++i) call[2 + n + i] = args[nargs + i];
  PyObject* result =
      PyObject_VectorcallMethod(g_forward_name, call, static_cast<size_t>(2 + n), kwnames);
  if (result == nullptr) return nullptr;
  PyObject* out = nullptr;
  if (PyTuple_CheckExact(result) && PyTuple_GET_SIZE(result) == 2) {
    out = wrap_outputs(PyTuple_GET_ITEM(result, 0), call + 2, n);
  } else {
    PyErr_Format(PyExc_TypeError, "%R.forward must return (outputs, saved)", args[0]);
  }
  Py_DECREF(result);
  return out;
}

PyObject* apply(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  if (g_apply_fallback == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "fkeras._eager.apply: configure_apply was not called");
    return nullptr;
  }
  if (nargs >= 1 && fast_enabled()) {
    PyObject* r = try_apply(args, nargs, kwnames);
    if (r != nullptr || PyErr_Occurred()) return r;
  }
  return PyObject_Vectorcall(g_apply_fallback, args, static_cast<size_t>(nargs), kwnames);
}

// configure_apply(cpu_device, np.generic, np.asarray, np.ascontiguousarray, python_apply)
PyObject* configure_apply(PyObject*, PyObject* args) {
  PyObject *dev, *generic, *asarray, *ascontiguous, *fallback;
  if (!PyArg_ParseTuple(args, "OOOOO:configure_apply", &dev, &generic, &asarray, &ascontiguous,
                        &fallback))
    return nullptr;
  if (!PyType_Check(generic) || !PyCallable_Check(asarray) || !PyCallable_Check(ascontiguous) ||
      !PyCallable_Check(fallback)) {
    PyErr_SetString(PyExc_TypeError, "configure_apply: expected a type and three callables");
    return nullptr;
  }
  if (g_forward_name == nullptr && (g_forward_name = PyUnicode_InternFromString("forward")) ==
                                       nullptr)
    return nullptr;
  PyObject* keep[] = {dev, generic, asarray, ascontiguous, fallback};
  for (PyObject* o : keep) Py_INCREF(o);
  Py_XSETREF(g_ascontiguous, ascontiguous);
  Py_XSETREF(g_cpu_device, dev);
  Py_XSETREF(g_generic, generic);
  Py_XSETREF(g_asarray, asarray);
  Py_XSETREF(g_apply_fallback, fallback);
  Py_RETURN_NONE;
}

// ---- module functions ----
PyObject* enter_slow(PyObject*, PyObject*) {
  ++t_state.blocked;
  Py_RETURN_NONE;
}

PyObject* exit_slow(PyObject*, PyObject*) {
  if (t_state.blocked > 0) --t_state.blocked;
  Py_RETURN_NONE;
}

PyObject* set_default_fast(PyObject*, PyObject* arg) {
  const int v = PyObject_IsTrue(arg);
  if (v < 0) return nullptr;
  g_default_fast = v;
  Py_RETURN_NONE;
}

PyObject* state(PyObject*, PyObject*) {
  return Py_BuildValue("{s:i,s:i,s:i,s:i}", "array_mode", t_state.array_mode, "blocked",
                       t_state.blocked, "default_fast", g_default_fast, "ready", g_ready);
}

// configure(ndarray, tensor_type, float32, int32, int64, bool_, probe): probe is
// np.zeros((2, 3), float32); returns whether the fast path is enabled.
PyObject* configure(PyObject*, PyObject* args) {
  PyObject *ndarray, *tensor, *f32, *i32, *i64, *b, *probe;
  if (!PyArg_ParseTuple(args, "OOOOOOO:configure", &ndarray, &tensor, &f32, &i32, &i64, &b,
                        &probe))
    return nullptr;
  g_ready = 0;
  if (!PyType_Check(ndarray) || !PyType_Check(tensor)) {
    PyErr_SetString(PyExc_TypeError, "configure: ndarray and tensor_type must be types");
    return nullptr;
  }
  PyObject* slot = PyObject_GetAttrString(tensor, "_value");
  if (slot == nullptr) return nullptr;
  const bool member = Py_TYPE(slot) == &PyMemberDescr_Type &&
                      reinterpret_cast<PyMemberDescrObject*>(slot)->d_member->type == T_OBJECT_EX;
  const Py_ssize_t offset =
      member ? reinterpret_cast<PyMemberDescrObject*>(slot)->d_member->offset : -1;
  Py_DECREF(slot);
  // The probe must read as NumPy's own attributes say (layout check).
  const bool layout = Py_TYPE(probe) == reinterpret_cast<PyTypeObject*>(ndarray) &&
                      head(probe)->nd == 2 && head(probe)->dimensions[0] == 2 &&
                      head(probe)->dimensions[1] == 3 && head(probe)->descr == f32 &&
                      (head(probe)->flags & kCContiguous);
  if (!member || !layout) Py_RETURN_FALSE;
  PyObject* keep[] = {ndarray, tensor, f32, i32, i64, b};
  for (PyObject* o : keep) Py_INCREF(o);
  g_ndarray = reinterpret_cast<PyTypeObject*>(ndarray);
  g_tensor = reinterpret_cast<PyTypeObject*>(tensor);
  g_float32 = f32;
  g_index_dtypes[0] = f32;
  g_index_dtypes[1] = i32;
  g_index_dtypes[2] = i64;
  g_index_dtypes[3] = b;
  g_value_offset = offset;
  g_ready = 1;
  Py_RETURN_TRUE;
}

PyMethodDef module_methods[] = {
    {"enter_slow", enter_slow, METH_NOARGS,
     "Opens a scope (tape, device) in which every op on this thread takes its Python path."},
    {"exit_slow", exit_slow, METH_NOARGS, "Closes a scope opened by enter_slow."},
    {"set_default_fast", set_default_fast, METH_O,
     "Whether the default device allows the fast path (the cpu does)."},
    {"state", state, METH_NOARGS, "This thread's fast-path state (a dict, for tests)."},
    {"apply", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(apply)),
     METH_FASTCALL | METH_KEYWORDS,
     "registry.apply with the fast path in front (see eager.cpp)."},
    {"configure_apply", configure_apply, METH_VARARGS,
     "Sets the cpu device, np.generic, np.asarray and the Python apply for apply()."},
    {"configure", configure, METH_VARARGS,
     "Enables the fast path for fkeras.Tensor; returns whether the layout check passed."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_eager",
                          "The eager fast path of fkeras's elementwise ops (see eager.cpp).", -1,
                          module_methods};

}  // namespace

PyMODINIT_FUNC PyInit__eager() {
  FastOpType.tp_name = "fkeras._eager.FastOp";
  FastOpType.tp_basicsize = sizeof(FastOp);
  FastOpType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
                        Py_TPFLAGS_METHOD_DESCRIPTOR;
  FastOpType.tp_doc = "An op function with a C fast path for plain float32 operands.";
  FastOpType.tp_new = PyType_GenericNew;
  FastOpType.tp_init = fastop_init;
  FastOpType.tp_dealloc = fastop_dealloc;
  FastOpType.tp_traverse = fastop_traverse;
  FastOpType.tp_clear = fastop_clear;
  FastOpType.tp_call = PyVectorcall_Call;
  FastOpType.tp_vectorcall_offset = offsetof(FastOp, vectorcall);
  FastOpType.tp_descr_get = fastop_descr_get;
  FastOpType.tp_dictoffset = offsetof(FastOp, dict);
  FastOpType.tp_getset = fastop_getset;
  FastOpType.tp_methods = fastop_methods;
  FastOpType.tp_getattro = PyObject_GenericGetAttr;
  FastOpType.tp_setattro = PyObject_GenericSetAttr;
  if (PyType_Ready(&FastOpType) < 0) return nullptr;

  ModeStateType.tp_name = "fkeras._eager.ModeState";
  ModeStateType.tp_basicsize = sizeof(ModeState);
  ModeStateType.tp_flags = Py_TPFLAGS_DEFAULT;
  ModeStateType.tp_doc = "The per-thread eager mode flag (attribute `array`).";
  ModeStateType.tp_new = PyType_GenericNew;
  ModeStateType.tp_getset = mode_getset;
  if (PyType_Ready(&ModeStateType) < 0) return nullptr;

  PyObject* m = PyModule_Create(&module_def);
  if (m == nullptr) return nullptr;
  PyObject* mode = PyObject_CallNoArgs(reinterpret_cast<PyObject*>(&ModeStateType));
  if (mode == nullptr || PyModule_AddObject(m, "mode", mode) < 0) {
    Py_XDECREF(mode);
    Py_DECREF(m);
    return nullptr;
  }
  Py_INCREF(&FastOpType);
  if (PyModule_AddObject(m, "FastOp", reinterpret_cast<PyObject*>(&FastOpType)) < 0) {
    Py_DECREF(&FastOpType);
    Py_DECREF(m);
    return nullptr;
  }
  PyModule_AddIntConstant(m, "UNARY", kUnary);
  PyModule_AddIntConstant(m, "BINARY", kBinary);
  PyModule_AddIntConstant(m, "BINARY_REFLECTED", kBinaryReflected);
  PyModule_AddIntConstant(m, "GETITEM", kGetItem);
  return m;
}
