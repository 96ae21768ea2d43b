// bind_inference_plan.cpp: fkeras._C.InferencePlan, a compiled inference plan
// (fkeras/inference_plan.h) built step by step from Python and run in one call.
//
// Building checks everything a kernel binding would: each slot is bound once to a float32 (or
// int64) C-contiguous array of its declared element count, each step's sizes are range-checked
// and must imply exactly its slots' element counts, outputs may not overlap inputs except where
// the kernel runs in place (activation, softmax, copy on the very same buffer). A run then only
// checks the per-call inputs and outputs, and that every watched variable still holds the
// buffer the plan was built on (else it returns False without computing: the caller rebuilds).
#include <pybind11/stl.h>

#include <mutex>
#include <string>
#include <vector>

#include "check.h"
#include "fkeras/inference_plan.h"
#include "fkeras/kernels.h"

namespace {

enum Role : int { kArena = 0, kWeight = 1, kInput = 2, kOutput = 3 };

[[noreturn]] void bad(const std::string& what) {
  throw py::value_error("InferencePlan: " + what);
}

struct Slot {
  int64_t size = 0;
  bool index = false;  // int64 (max-pool indices) instead of float32
  int role = kArena;
  bool bound = false;
  py::object array;  // keeps a bound buffer alive
  const char* lo = nullptr;
  const char* hi = nullptr;
};

bool overlap(const Slot& a, const Slot& b) {
  return a.lo != nullptr && b.lo != nullptr && a.lo < b.hi && b.lo < a.hi;
}

class Plan {
 public:
  Plan(const std::vector<int64_t>& sizes, const std::vector<int>& roles,
       const std::vector<bool>& index) {
    if (roles.size() != sizes.size() || index.size() != sizes.size())
      bad("sizes, roles and index must have one entry per slot");
    slots_.resize(sizes.size());
    for (size_t i = 0; i < sizes.size(); ++i) {
      fkb::check_sizes("InferencePlan", {{"slot size", sizes[i]}});
      if (roles[i] < kArena || roles[i] > kOutput) bad("unknown slot role");
      slots_[i].size = sizes[i];
      slots_[i].role = roles[i];
      slots_[i].index = index[i];
      if (roles[i] == kInput) inputs_.push_back(static_cast<int64_t>(i));
      if (roles[i] == kOutput) outputs_.push_back(static_cast<int64_t>(i));
    }
    ptrs_.assign(sizes.size(), nullptr);
  }

  void bind(int64_t i, const py::object& array) {
    Slot& s = slot(i, "bind");
    if (s.role == kInput || s.role == kOutput) bad("input and output slots are bound per call");
    if (s.bound) bad("slot " + std::to_string(i) + " is already bound");
    void* p = checked(array, s, s.role == kArena, "bind");
    s.array = array;
    s.bound = true;
    ptrs_[i] = p;
    for (size_t j = 0; j < slots_.size(); ++j)
      if (static_cast<int64_t>(j) != i && slots_[j].role == kArena && s.role == kArena &&
          overlap(s, slots_[j]))
        bad("arena slots " + std::to_string(i) + " and " + std::to_string(j) + " overlap");
  }

  void watch(const py::object& owner, const py::object& array) {
    watched_.emplace_back(owner, array);
  }

  void add_step(int64_t op, const std::vector<int64_t>& sl, const std::vector<int64_t>& p,
                float f) {
    if (sl.size() != fk::kPlanSlots) bad("a step names 6 slots (-1: none)");
    fk::PlanStep s;
    s.op = op;
    s.f = f;
    for (int i = 0; i < fk::kPlanSlots; ++i) {
      if (sl[i] < -1 || sl[i] >= static_cast<int64_t>(slots_.size()))
        bad("step slot " + std::to_string(sl[i]) + " out of range");
      s.slot[i] = sl[i];
    }
    const size_t np_ = p.size();
    if (np_ > static_cast<size_t>(fk::kPlanParams)) bad("too many step parameters");
    for (size_t i = 0; i < np_; ++i) s.p[i] = p[i];
    auto need = [&](size_t n) {
      if (np_ != n) bad("step " + std::to_string(op) + " takes " + std::to_string(n) +
                        " parameters, received " + std::to_string(np_));
    };
    const int64_t* q = s.p;
    bool in_place = false;
    switch (op) {
      case fk::kPlanDense: {
        need(4);
        fkb::check_sizes("InferencePlan dense", {{"M", q[0]}, {"N", q[1]}, {"K", q[2]}});
        fkb::check_activation(q[3], "InferencePlan dense", "activation", fkb::ActUse::kFused);
        expect(s, 0, {q[0], q[1]}, false);
        expect(s, 1, {q[0], q[2]}, false);
        expect(s, 2, {q[2], q[1]}, false);
        expect(s, 3, {q[1]}, true);
        break;
      }
      case fk::kPlanConv2d:
      case fk::kPlanConv2dMaxPool: {
        const bool pooled = op == fk::kPlanConv2dMaxPool;
        need(pooled ? 19 : 17);
        const char* k = pooled ? "InferencePlan conv2d_maxpool2d" : "InferencePlan conv2d";
        fkb::check_sizes(k, {{"N", q[0]}, {"H", q[1]}, {"W", q[2]}, {"C", q[3]}, {"K", q[4]},
                             {"R", q[5]}, {"S", q[6]}, {"P", q[7]}, {"Q", q[8]},
                             {"pad_top", q[13]}, {"pad_left", q[14]}});
        if (q[9] < 1 || q[10] < 1 || q[11] < 1 || q[12] < 1)
          bad("conv2d strides and dilations must be >= 1");
        fkb::check_axis(k, {"H", q[1]}, {"P", q[7]}, {"R", q[5]}, {"stride_h", q[9]},
                        {"dil_h", q[11]}, {"pad_top", q[13]});
        fkb::check_axis(k, {"W", q[2]}, {"Q", q[8]}, {"S", q[6]}, {"stride_w", q[10]},
                        {"dil_w", q[12]}, {"pad_left", q[14]});
        if (q[15] < 1 || q[3] % q[15] != 0 || q[4] % q[15] != 0)
          bad("conv2d groups must be >= 1 and divide C and K");
        fkb::check_activation(q[16], k, "activation", fkb::ActUse::kFused);
        if (pooled) {
          if (q[17] < 1 || q[18] < 1)
            bad("conv2d_maxpool2d pool sizes must be >= 1, received (" + std::to_string(q[17]) +
                ", " + std::to_string(q[18]) + ")");
          expect(s, 0, {q[0], q[7] / q[17], q[8] / q[18], q[4]}, false);
        } else {
          expect(s, 0, {q[0], q[7], q[8], q[4]}, false);
        }
        expect(s, 1, {q[0], q[1], q[2], q[3]}, false);
        expect(s, 2, {q[5], q[6], q[3] / q[15], q[4]}, false);
        expect(s, 3, {q[4]}, true);
        break;
      }
      case fk::kPlanMaxPool2d:
      case fk::kPlanAvgPool2d: {
        need(12);
        const char* k = "InferencePlan pool2d";
        fkb::check_sizes(k, {{"N", q[0]}, {"H", q[1]}, {"W", q[2]}, {"C", q[3]}, {"P", q[4]},
                             {"Q", q[5]}, {"R", q[6]}, {"S", q[7]}, {"pad_top", q[10]},
                             {"pad_left", q[11]}});
        if (q[8] < 1 || q[9] < 1) bad("pool2d strides must be >= 1");
        fkb::check_axis(k, {"H", q[1]}, {"P", q[4]}, {"R", q[6]}, {"stride_h", q[8]},
                        {"dilation", 1}, {"pad_top", q[10]});
        fkb::check_axis(k, {"W", q[2]}, {"Q", q[5]}, {"S", q[7]}, {"stride_w", q[9]},
                        {"dilation", 1}, {"pad_left", q[11]});
        auto axis_ok = [](int64_t out, int64_t k_, int64_t stride, int64_t pad, int64_t size) {
          return out == 0 || (k_ - 1 - pad >= 0 && (out - 1) * stride - pad < size);
        };
        if (!axis_ok(q[4], q[6], q[8], q[10], q[1]) || !axis_ok(q[5], q[7], q[9], q[11], q[2]))
          bad("pool2d: some pooling window lies entirely in the padding");
        expect(s, 0, {q[0], q[4], q[5], q[3]}, false);
        expect(s, 1, {q[0], q[1], q[2], q[3]}, false);
        if (op == fk::kPlanMaxPool2d) expect(s, 4, {q[0], q[4], q[5], q[3]}, false, true);
        break;
      }
      case fk::kPlanActivation:
        need(2);
        fkb::check_sizes("InferencePlan activation", {{"n", q[0]}});
        fkb::check_activation(q[1], "InferencePlan activation", "activation",
                              fkb::ActUse::kAny);
        expect(s, 0, {q[0]}, false);
        expect(s, 1, {q[0]}, false);
        in_place = true;
        break;
      case fk::kPlanSoftmax:
        need(2);
        fkb::check_sizes("InferencePlan softmax", {{"rows", q[0]}, {"cols", q[1]}});
        expect(s, 0, {q[0], q[1]}, false);
        expect(s, 1, {q[0], q[1]}, false);
        in_place = true;
        break;
      case fk::kPlanBatchNorm:
        need(3);
        fkb::check_sizes("InferencePlan batchnorm",
                         {{"outer", q[0]}, {"C", q[1]}, {"inner", q[2]}});
        expect(s, 0, {q[0], q[1], q[2]}, false);
        expect(s, 1, {q[0], q[1], q[2]}, false);
        expect(s, 2, {q[1]}, false);
        expect(s, 3, {q[1]}, false);
        expect(s, 4, {q[1]}, true);
        expect(s, 5, {q[1]}, true);
        break;
      case fk::kPlanCopy:
        need(1);
        fkb::check_sizes("InferencePlan copy", {{"n", q[0]}});
        expect(s, 0, {q[0]}, false);
        expect(s, 1, {q[0]}, false);
        in_place = true;
        break;
      default:
        bad("unknown step code " + std::to_string(op));
    }
    // Written slots: arena or outputs; never overlapping what the step reads (but in place).
    const int64_t written[2] = {s.slot[0], op == fk::kPlanMaxPool2d ? s.slot[4] : -1};
    for (int64_t w : written) {
      if (w < 0) continue;
      if (slots_[w].role != kArena && slots_[w].role != kOutput)
        bad("a step writes slot " + std::to_string(w) + ", which is not an arena or output slot");
      for (int i = 1; i < fk::kPlanSlots; ++i) {
        const int64_t r = s.slot[i];
        if (r >= 0 && (r == written[0] || r == written[1]) && i == 4 &&
            op == fk::kPlanMaxPool2d) {
          if (written[0] == written[1]) bad("max pooling writes y and indices to one slot");
          continue;  // max pooling's indices: written, not read
        }
        if (r < 0 || r == w) {
          if (r == w && !(in_place && i == 1)) bad("a step writes a slot it reads");
          continue;
        }
        if (overlap(slots_[w], slots_[r]) &&
            !(in_place && i == 1 && slots_[w].lo == slots_[r].lo && slots_[w].hi == slots_[r].hi))
          bad("a step's output overlaps its input");
      }
    }
    steps_.push_back(s);
  }

  // Runs on the per-call arrays (inputs, then outputs); False when a watched variable changed.
  bool run(const py::args& args) {
    if (args.size() != inputs_.size() + outputs_.size())
      bad("run expects " + std::to_string(inputs_.size()) + " inputs and " +
          std::to_string(outputs_.size()) + " outputs, received " +
          std::to_string(args.size()) + " arrays");
    for (auto& [owner, array] : watched_) {
      PyObject* v = PyObject_GetAttrString(owner.ptr(), "_value");
      if (v == nullptr) throw py::error_already_set();
      const bool same = v == array.ptr();
      Py_DECREF(v);
      if (!same) return false;
    }
    for (const auto& s : slots_)
      if ((s.role == kArena || s.role == kWeight) && !s.bound) bad("a slot is not bound");
    std::vector<void*> ptrs(ptrs_);
    std::vector<Slot> io;
    io.reserve(args.size());
    size_t a = 0;
    for (int64_t i : inputs_) {
      Slot s = slots_[i];
      ptrs[i] = checked(args[a++], s, false, "run (input)");
      io.push_back(s);
    }
    for (int64_t i : outputs_) {
      Slot s = slots_[i];
      ptrs[i] = checked(args[a++], s, true, "run (output)");
      for (const Slot& o : io)
        if (overlap(s, o)) bad("an output overlaps an input or another output");
      for (const Slot& o : slots_)
        if (o.role == kArena || o.role == kWeight)
          if (overlap(s, o)) bad("an output overlaps a buffer of the plan");
      io.push_back(s);
    }
    py::gil_scoped_release nogil;
    std::lock_guard<std::mutex> lock(mu_);  // one run at a time: the arena is shared
    fk::run_inference_plan(steps_, ptrs.data());
    return true;
  }

  size_t num_steps() const { return steps_.size(); }

 private:
  Slot& slot(int64_t i, const char* what) {
    if (i < 0 || i >= static_cast<int64_t>(slots_.size()))
      bad(std::string(what) + ": slot " + std::to_string(i) + " out of range");
    return slots_[i];
  }

  // A checked buffer for slot `s`; records its byte range in `s`.
  void* checked(py::handle obj, Slot& s, bool writable, const char* what) {
    const py::object o = py::reinterpret_borrow<py::object>(obj);
    void* p = s.index ? static_cast<void*>(writable ? fkb::out_i64(o, "InferencePlan", what,
                                                                   {s.size})
                                                    : const_cast<int64_t*>(fkb::in_i64(
                                                          o, "InferencePlan", what, {s.size})))
                      : static_cast<void*>(writable ? fkb::out_f32(o, "InferencePlan", what,
                                                                   {s.size})
                                                    : const_cast<float*>(fkb::in_f32(
                                                          o, "InferencePlan", what, {s.size})));
    const int64_t bytes = s.size * 8 / (s.index ? 1 : 2);
    s.lo = s.size ? static_cast<const char*>(p) : nullptr;
    s.hi = s.lo ? s.lo + bytes : nullptr;
    return p;
  }

  // Slot `k` of step `s` must hold exactly prod(dims) elements (or be absent when optional).
  void expect(const fk::PlanStep& s, int k, std::initializer_list<int64_t> dims, bool optional,
              bool index = false) {
    const int64_t i = s.slot[k];
    if (i < 0) {
      if (optional) return;
      bad("step " + std::to_string(s.op) + " needs slot argument " + std::to_string(k));
    }
    int64_t n = 1;
    for (int64_t d : dims)
      if (__builtin_mul_overflow(n, d, &n)) bad("step sizes overflow");
    if (slots_[i].size != n)
      bad("step " + std::to_string(s.op) + ": slot " + std::to_string(i) + " holds " +
          std::to_string(slots_[i].size) + " elements, the step's sizes imply " +
          std::to_string(n));
    if (slots_[i].index != index) bad("step slot " + std::to_string(i) + " has the wrong dtype");
  }

  std::vector<Slot> slots_;
  std::vector<void*> ptrs_;
  std::vector<int64_t> inputs_, outputs_;
  std::vector<fk::PlanStep> steps_;
  std::vector<std::pair<py::object, py::object>> watched_;
  std::mutex mu_;
};

}  // namespace

void bind_inference_plan(py::module_& m) {
  py::class_<Plan>(m, "InferencePlan",
                   "A compiled inference plan: kernel steps over numbered buffers, run in one "
                   "call (python/fkeras/models/compiled_plan.py builds it).")
      .def(py::init<const std::vector<int64_t>&, const std::vector<int>&,
                    const std::vector<bool>&>(),
           py::arg("sizes"), py::arg("roles"), py::arg("index"))
      .def("bind", &Plan::bind, py::arg("slot"), py::arg("array"))
      .def("watch", &Plan::watch, py::arg("owner"), py::arg("array"),
           "Runs return False once `owner._value` is no longer `array`.")
      .def("add_step", &Plan::add_step, py::arg("op"), py::arg("slots"), py::arg("params"),
           py::arg("f") = 0.f)
      .def("run", &Plan::run, "run(*inputs, *outputs) -> bool")
      .def_property_readonly("num_steps", &Plan::num_steps);
}
