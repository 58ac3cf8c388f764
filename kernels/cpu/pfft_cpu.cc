// pfft CPU engine: XLA FFI handlers over DUCC0's FFT, for any axes of a row-major
// block (XLA's default layout for custom calls; DUCC walks any axis through its stride,
// so no transpose is made).
//
// Four handlers, exported with C linkage so that a plain shared library can be loaded
// with ctypes and registered through jax.ffi.pycapsule. Each takes one operand and
// returns one result:
//
//   PfftC2C  complex -> complex (complex64 or complex128), the result of the operand's
//            shape and type: in place when XLA aliases the result to the operand
//            (input_output_aliases={0: 0}), else out of place.
//            Attributes: axes, forward, scale, nthreads.
//   PfftR2C  real -> complex (float32 -> complex64, float64 -> complex128), the last
//            listed axis of n real points giving n//2+1 bins, the other axes unchanged.
//            Attributes: axes, forward, scale, nthreads.
//   PfftC2R  complex -> real (complex64 -> float32, complex128 -> float64), n//2+1 bins
//            of the last listed axis giving its n real points (n is the result's
//            length there), the other axes unchanged.
//            Attributes: axes, forward, scale, nthreads.
//   PfftR2R  real -> real DCT or DST of scipy's unnormalised types 1-4 (float32 or
//            float64), the result of the operand's shape and type, in place when
//            aliased as PfftC2C.
//            Attributes: axes, type, sine, scale, nthreads.
//
// Attributes:
//   axes      int64 array, the transformed axes; negative values count from the end, so
//             that leading batch dimensions added by vmap ("broadcast_all") need no
//             rewriting. Each axis at most once, at least one.
//   forward   bool; true: exp(-2 pi i jk/n) sign, false: exp(+2 pi i jk/n)
//   scale     float64; multiplies the result (fused into the first pass); the
//             transform itself is unnormalised in both directions
//   nthreads  int64; DUCC threads (0 or less: DUCC's default, DUCC0_NUM_THREADS or all
//             cores)
//   type      int64, PfftR2R: the DCT/DST type, 1-4
//   sine      bool, PfftR2R: true for a DST, false for a DCT
//
// Every element of each handler's result is written: the result is never read before
// it is written and nothing the caller left in its buffer is kept (in place, the
// operand's values are read and then written over). An r2c over zero real points (an
// operand with nothing along the halved axis) writes each line's one bin as 0, the
// empty sum.
//
// Also exported: pfft_cpu_abi_version (the calling convention, checked by
// pfft/engines/_kernels.py) and pfft_cpu_set_hugepage_advice (huge_pages.h).

#include <atomic>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
#include <type_traits>
#include <vector>

#include "ducc0/fft/fft.h"
#include "ducc0/fft/fftnd_impl.h"
#include "huge_pages.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

using Shape = std::vector<size_t>;
using Strides = std::vector<ptrdiff_t>;

struct Layout {
  Shape shape;
  Strides strides;  // in elements
};

Layout RowMajor(ffi::Span<const int64_t> dims) {
  Layout l;
  l.shape.resize(dims.size());
  l.strides.resize(dims.size());
  ptrdiff_t s = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    l.shape[i] = static_cast<size_t>(dims[i]);
    l.strides[i] = s;
    s *= static_cast<ptrdiff_t>(dims[i]);
  }
  return l;
}

// Negative axes count from the end; every axis in range and listed once.
ffi::Error ResolveAxes(ffi::Span<const int64_t> axes, size_t ndim, Shape &out) {
  out.clear();
  for (int64_t a : axes) {
    int64_t r = a < 0 ? a + static_cast<int64_t>(ndim) : a;
    if (r < 0 || r >= static_cast<int64_t>(ndim))
      return ffi::Error::InvalidArgument("pfft: axis " + std::to_string(a) +
                                         " out of range for rank " + std::to_string(ndim));
    for (size_t b : out)
      if (b == static_cast<size_t>(r))
        return ffi::Error::InvalidArgument("pfft: repeated axis " + std::to_string(a));
    out.push_back(static_cast<size_t>(r));
  }
  if (out.empty()) return ffi::Error::InvalidArgument("pfft: no axes to transform");
  return ffi::Error::Success();
}

// The operand's dims are the result's: the two checked equal (rank, every length).
bool SameDims(ffi::Span<const int64_t> a, ffi::Span<const int64_t> b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) return false;
  return true;
}

template <typename T>
void C2C(const void *in, void *out, const Layout &l, const Shape &axes, bool forward,
         double scale, size_t nthreads) {
  using C = std::complex<T>;
  ducc0::cfmav<C> src(static_cast<const C *>(in), l.shape, l.strides);
  ducc0::vfmav<C> dst(static_cast<C *>(out), l.shape, l.strides);
  ducc0::c2c(src, dst, axes, forward, static_cast<T>(scale), nthreads);
}

// A real transform: real `in` to complex `out` (kToComplex), else complex to real
template <typename T, bool kToComplex>
void Real(const void *in, void *out, const Layout &li, const Layout &lo, const Shape &axes,
          bool forward, double scale, size_t nthreads) {
  using C = std::complex<T>;
  using In = std::conditional_t<kToComplex, T, C>;
  using Out = std::conditional_t<kToComplex, C, T>;
  ducc0::cfmav<In> src(static_cast<const In *>(in), li.shape, li.strides);
  ducc0::vfmav<Out> dst(static_cast<Out *>(out), lo.shape, lo.strides);
  if constexpr (kToComplex)
    ducc0::r2c(src, dst, axes, forward, static_cast<T>(scale), nthreads);
  else
    ducc0::c2r(src, dst, axes, forward, static_cast<T>(scale), nthreads);
}

// Every element of y written: DUCC's c2c writes each point of each transformed line,
// and the lines cover the block (an empty block has no element to write).
ffi::Error C2CImpl(ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y,
                   ffi::Span<const int64_t> axes, bool forward, double scale,
                   int64_t nthreads) {
  auto dims = x.dimensions();
  if (y->element_type() != x.element_type() || !SameDims(y->dimensions(), dims))
    return ffi::Error::InvalidArgument("pfft c2c: output must match the input");
  Shape ax;
  if (auto err = ResolveAxes(axes, dims.size(), ax); err.failure()) return err;
  Layout l = RowMajor(dims);
  // Aliased (donated, input_output_aliases={0: 0}): DUCC transforms in place.
  // Not aliased: DUCC reads x in its first pass and writes y, no separate copy.
  const void *in = x.untyped_data();
  void *out = y->untyped_data();
  if (out != in) pfft::AdviseHugePages(out, y->size_bytes());
  size_t nt = static_cast<size_t>(nthreads < 0 ? 0 : nthreads);
  try {
    switch (x.element_type()) {
      case ffi::DataType::C64: C2C<float>(in, out, l, ax, forward, scale, nt); break;
      case ffi::DataType::C128: C2C<double>(in, out, l, ax, forward, scale, nt); break;
      default: return ffi::Error::InvalidArgument("pfft c2c: complex64 or complex128 only");
    }
  } catch (const std::exception &e) {
    return ffi::Error::Internal(std::string("pfft c2c: ") + e.what());
  }
  return ffi::Error::Success();
}

// Real transforms: kToComplex is r2c (real n -> n//2+1 bins on the last listed axis),
// else c2r. `real` is the real side's layout, `cplx` the complex side's. Every element
// of y written: DUCC's r2c/c2r write each point of each line of y; where x holds no
// element (an r2c of zero points, whose one bin is the empty sum) y is written as 0.
template <bool kToComplex>
ffi::Error RealImpl(ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y,
                    ffi::Span<const int64_t> axes, bool forward, double scale,
                    int64_t nthreads) {
  const char *name = kToComplex ? "pfft r2c: " : "pfft c2r: ";
  auto dims = x.dimensions();
  Shape ax;
  if (auto err = ResolveAxes(axes, dims.size(), ax); err.failure()) return err;
  Layout li = RowMajor(dims), lo = RowMajor(y->dimensions());
  if (lo.shape.size() != li.shape.size())
    return ffi::Error::InvalidArgument(std::string(name) + "output rank differs from input");
  const Layout &real = kToComplex ? li : lo, &cplx = kToComplex ? lo : li;
  for (size_t i = 0; i < real.shape.size(); ++i) {
    size_t want = i == ax.back() ? real.shape[i] / 2 + 1 : real.shape[i];
    if (cplx.shape[i] != want)
      return ffi::Error::InvalidArgument(
          std::string(name) + (kToComplex ? "output shape must halve the last axis"
                                          : "input must hold n//2+1 bins on the last axis"));
  }
  auto rt = (kToComplex ? x.element_type() : y->element_type());
  auto ct = (kToComplex ? y->element_type() : x.element_type());
  bool single = rt == ffi::DataType::F32 && ct == ffi::DataType::C64;
  if (!single && !(rt == ffi::DataType::F64 && ct == ffi::DataType::C128))
    return ffi::Error::InvalidArgument(
        std::string(name) + (kToComplex ? "float32->complex64 or float64->complex128"
                                        : "complex64->float32 or complex128->float64"));
  const void *in = x.untyped_data();
  void *out = y->untyped_data();
  if (y->element_count() == 0) return ffi::Error::Success();
  if (x.element_count() == 0) {
    std::memset(out, 0, y->size_bytes());
    return ffi::Error::Success();
  }
  size_t nt = static_cast<size_t>(nthreads < 0 ? 0 : nthreads);
  pfft::AdviseHugePages(out, y->size_bytes());
  try {
    if (single) Real<float, kToComplex>(in, out, li, lo, ax, forward, scale, nt);
    else Real<double, kToComplex>(in, out, li, lo, ax, forward, scale, nt);
  } catch (const std::exception &e) {
    return ffi::Error::Internal(std::string(name) + e.what());
  }
  return ffi::Error::Success();
}

template <typename T>
void R2R(const void *in, void *out, const Layout &l, const Shape &axes, int type, bool sine,
         double scale, size_t nthreads) {
  ducc0::cfmav<T> src(static_cast<const T *>(in), l.shape, l.strides);
  ducc0::vfmav<T> dst(static_cast<T *>(out), l.shape, l.strides);
  // ortho=false: scipy's unnormalised transform; pfft applies end-point weights itself
  if (sine) ducc0::dst(src, dst, axes, type, static_cast<T>(scale), false, nthreads);
  else ducc0::dct(src, dst, axes, type, static_cast<T>(scale), false, nthreads);
}

// Every element of y written, as C2CImpl's.
ffi::Error R2RImpl(ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y,
                   ffi::Span<const int64_t> axes, int64_t type, bool sine, double scale,
                   int64_t nthreads) {
  auto dims = x.dimensions();
  if (y->element_type() != x.element_type() || !SameDims(y->dimensions(), dims))
    return ffi::Error::InvalidArgument("pfft r2r: output must match the input");
  if (type < 1 || type > 4)
    return ffi::Error::InvalidArgument("pfft r2r: type must be 1, 2, 3 or 4");
  Shape ax;
  if (auto err = ResolveAxes(axes, dims.size(), ax); err.failure()) return err;
  Layout l = RowMajor(dims);
  const void *in = x.untyped_data();
  void *out = y->untyped_data();
  if (out != in) pfft::AdviseHugePages(out, y->size_bytes());
  size_t nt = static_cast<size_t>(nthreads < 0 ? 0 : nthreads);
  try {
    switch (x.element_type()) {
      case ffi::DataType::F32: R2R<float>(in, out, l, ax, int(type), sine, scale, nt); break;
      case ffi::DataType::F64: R2R<double>(in, out, l, ax, int(type), sine, scale, nt); break;
      default: return ffi::Error::InvalidArgument("pfft r2r: float32 or float64 only");
    }
  } catch (const std::exception &e) {
    return ffi::Error::Internal(std::string("pfft r2r: ") + e.what());
  }
  return ffi::Error::Success();
}

}  // namespace

#define PFFT_BIND                                  \
  ffi::Ffi::Bind()                                 \
      .Arg<ffi::AnyBuffer>()                       \
      .Ret<ffi::AnyBuffer>()                       \
      .Attr<ffi::Span<const int64_t>>("axes")      \
      .Attr<bool>("forward")                       \
      .Attr<double>("scale")                       \
      .Attr<int64_t>("nthreads")

// Built with -fvisibility=hidden (DUCC stays private); the handlers are the exports.
#pragma GCC visibility push(default)
XLA_FFI_DEFINE_HANDLER_SYMBOL(PfftC2C, C2CImpl, PFFT_BIND);
XLA_FFI_DEFINE_HANDLER_SYMBOL(PfftR2C, RealImpl<true>, PFFT_BIND);
XLA_FFI_DEFINE_HANDLER_SYMBOL(PfftC2R, RealImpl<false>, PFFT_BIND);
XLA_FFI_DEFINE_HANDLER_SYMBOL(PfftR2R, R2RImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>()
                                  .Attr<ffi::Span<const int64_t>>("axes")
                                  .Attr<int64_t>("type")
                                  .Attr<bool>("sine")
                                  .Attr<double>("scale")
                                  .Attr<int64_t>("nthreads"));

// The version of this library's calling convention (its handlers, their operands,
// results and attributes, and the exported functions), checked by
// pfft/engines/_kernels.py against ABI_VERSIONS["cpu"]; raised with any change to them.
extern "C" int pfft_cpu_abi_version() { return 14; }

// Huge-page advice on the buffers the kernels write first (huge_pages.h): on (1, the
// default) or off (0). pfft's loader sets it from $PFFT_NO_HUGEPAGE_ADVICE; the
// library reads no environment.
extern "C" void pfft_cpu_set_hugepage_advice(int on) {
  pfft::huge_page_advice.store(on != 0, std::memory_order_relaxed);
}
#pragma GCC visibility pop
