// common.h: what every fkeras kernel file shares.
//
// Dimension glossary (one letter, one meaning, everywhere in cpp/ and cuda/):
//   N  batch                 T  time steps            F  features into a recurrent layer
//   H W  input height/width  P Q  output height/width C  in-channels
//   K  filters (out-channels) R S  filter height/width U  recurrent units
//   M  GEMM rows of C        (GEMM's N and K are its columns and reduction length)
//   outer, inner             batch norm views a tensor as (outer, C, inner)
//   n  a flat element count
//   Tq Tk  attention query/key lengths   D Dv  attention head sizes (query-key, value)
//
// Errors: FK_CHECK(cond, message parts...) throws fk::Error; the bindings turn it into a
// Python ValueError. Kernels never call exit() or abort().
#pragma once

#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>

namespace fk {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

namespace detail {
inline void append(std::ostringstream&) {}
template <typename T, typename... Rest>
void append(std::ostringstream& os, const T& first, const Rest&... rest) {
  os << first;
  append(os, rest...);
}
}  // namespace detail

template <typename... Parts>
[[noreturn]] void fail(const Parts&... parts) {
  std::ostringstream os;
  detail::append(os, parts...);
  throw Error(os.str());
}

}  // namespace fk

#define FK_CHECK(cond, ...)               \
  do {                                    \
    if (!(cond)) ::fk::fail(__VA_ARGS__); \
  } while (0)
