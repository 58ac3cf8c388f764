// pfft CPU engine: XLA FFI handlers over DUCC0's FFT.
//
// Three handlers, exported with C linkage so that a plain shared library can be
// loaded with ctypes and registered through jax.ffi.pycapsule:
//
//   PfftC2C  complex -> complex over any axes, in place when XLA aliases the
//            output to the input (input_output_aliases={0: 0}), else out of place;
//            attribute `shape` (int64 array): the block seen as that shape, the same
//            number of elements, the axes counted in it (empty: its own), so that a
//            block written in place in one layout is transformed in place in another
//   PfftR2C  real -> complex over any axes, the last listed axis halved (n//2+1)
//   PfftC2R  complex -> real over any axes, the last listed axis of n real points
//   PfftC2CRows      complex -> complex over axes that end right before axis `axis`:
//                    rows [in_start, in_start + r) of that axis of the input to rows
//                    [out_start, out_start + r) of the output, r the fewer rows of the
//                    two, read and written where they lie (no copy of the rows); the
//                    output's other rows unwritten
//   PfftC2CRowsInto  the same into a block given as a first operand that XLA aliases to
//                    the output (input_output_aliases={0: 0}): its other rows kept
//                    (both: attribute out_shape, the output seen as that shape: a block
//                    written in place between two layouts of the same bytes; any
//                    further operands are only waited for: a caller that read the block
//                    first passes what it read, so XLA orders the read before the write
//                    and needs no copy of the block, and a read can be made to wait for
//                    a write the same way)
//   PfftTakeChunks   points start..start + width of every chunk of a block's axis, as a
//                    piece with the chunk axis first (common/chunk_copy.h), any dtype:
//                    what a pipelined window sends, taken from the block its transform
//                    then writes into (PfftC2CRowsInto waits for the next take; further
//                    operands only waited for, as above)
//   PfftPutChunks    the inverse: a piece written over points start..start + width of
//                    every chunk of a block given as a first operand that XLA aliases
//                    to the output, the rest kept (further operands only waited for):
//                    a pipelined window's received piece put back on the bytes it was
//                    read from
//   PfftPutChunksNew the same into a new block, without the first operand (the points
//                    no piece was put on left as allocated: for a caller that puts
//                    every piece, the first making the block)
//   PfftR2R  real -> real DCT or DST (scipy's unnormalised types 1-4) over any axes
//            (attributes `type` int64 1-4 and `sine` bool instead of `forward`)
//
// Attributes (all handlers):
//   axes      int64 array; negative values count from the end, so that leading
//             batch dimensions added by vmap ("broadcast_all") need no rewriting
//   forward   bool; true: exp(-2 pi i jk/n) sign, false: exp(+2 pi i jk/n)
//   scale     float64; multiplies the result (fused into the first pass); the
//             transform itself is unnormalised in both directions
//   nthreads  int64; DUCC threads (0: DUCC's default, DUCC0_NUM_THREADS or all cores)
//
// Arrays are row-major (XLA's default layout for custom calls); DUCC walks any
// axis through its stride, so no transpose is made.

#include <algorithm>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
#include <type_traits>
#include <vector>

#include "../common/chunk_copy.h"
#include "ducc0/fft/fft.h"
#include "ducc0/fft/fftnd_impl.h"
#include "huge_pages.h"
#include "../common/rows_attrs.h"
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

// `in` and `out` seen through layouts of one shape (the rows handlers: each with the
// strides of its own block)
template <typename T>
void C2C(const void *in, const Layout &li, void *out, const Layout &lo, const Shape &axes,
         bool forward, double scale, size_t nthreads) {
  using C = std::complex<T>;
  ducc0::cfmav<C> src(static_cast<const C *>(in), li.shape, li.strides);
  ducc0::vfmav<C> dst(static_cast<C *>(out), lo.shape, lo.strides);
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

// `shape`: the block seen as this shape (the same number of elements; empty: its own)
ffi::Error C2CImpl(ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y,
                   ffi::Span<const int64_t> axes, bool forward, double scale,
                   int64_t nthreads, ffi::Span<const int64_t> shape) {
  if (y->element_type() != x.element_type() || y->dimensions().size() != x.dimensions().size())
    return ffi::Error::InvalidArgument("pfft c2c: output must match the input");
  auto dims = shape.size() == 0 ? x.dimensions() : shape;
  size_t count = 1;
  for (int64_t d : dims) count *= static_cast<size_t>(d);
  if (count != x.element_count())
    return ffi::Error::InvalidArgument("pfft c2c: shape does not hold the block's elements");
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
      case ffi::DataType::C64: C2C<float>(in, l, out, l, ax, forward, scale, nt); break;
      case ffi::DataType::C128: C2C<double>(in, l, out, l, ax, forward, scale, nt); break;
      default: return ffi::Error::InvalidArgument("pfft c2c: complex64 or complex128 only");
    }
  } catch (const std::exception &e) {
    return ffi::Error::Internal(std::string("pfft c2c: ") + e.what());
  }
  return ffi::Error::Success();
}

// Real transforms: kToComplex is r2c (real n -> n//2+1 bins on the last listed axis),
// else c2r. `real` is the real side's layout, `cplx` the complex side's.
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
  size_t nt = static_cast<size_t>(nthreads < 0 ? 0 : nthreads);
  pfft::AdviseHugePages(y->untyped_data(), y->size_bytes());
  auto rt = (kToComplex ? x.element_type() : y->element_type());
  auto ct = (kToComplex ? y->element_type() : x.element_type());
  const void *in = x.untyped_data();
  void *out = y->untyped_data();
  try {
    if (rt == ffi::DataType::F32 && ct == ffi::DataType::C64) {
      Real<float, kToComplex>(in, out, li, lo, ax, forward, scale, nt);
    } else if (rt == ffi::DataType::F64 && ct == ffi::DataType::C128) {
      Real<double, kToComplex>(in, out, li, lo, ax, forward, scale, nt);
    } else {
      return ffi::Error::InvalidArgument(
          std::string(name) + (kToComplex ? "float32->complex64 or float64->complex128"
                                          : "complex64->float32 or complex128->float64"));
    }
  } catch (const std::exception &e) {
    return ffi::Error::Internal(std::string(name) + e.what());
  }
  return ffi::Error::Success();
}

// The rows handlers' check: complex, one rank, the same dims but along the rows' axis,
// the rows inside both blocks, and (as the GPU kernel takes them) the axes at most three
// adjacent ones ending right before the rows' axis, or every axis before it of one
// point. "" or the error.
std::string RowsError(const Layout &li, const Layout &lo, const Shape &ax, size_t axis,
                      int64_t in_start, int64_t out_start, size_t rows) {
  if (li.shape.size() != lo.shape.size()) return "input and output ranks differ";
  for (size_t i = 0; i < li.shape.size(); ++i)
    if (i != axis && li.shape[i] != lo.shape[i])
      return "input and output differ along an axis other than the rows'";
  if (in_start < 0 || out_start < 0 || size_t(in_start) + rows > li.shape[axis] ||
      size_t(out_start) + rows > lo.shape[axis])
    return "the rows lie outside the input or the output";
  size_t before = 1;
  for (size_t i = 0; i < axis; ++i) before *= li.shape[i];
  if (before == 1) return "";  // the rows are one contiguous block in both
  size_t lo_axis = ax[0], hi_axis = ax[0];
  for (size_t a : ax) lo_axis = std::min(lo_axis, a), hi_axis = std::max(hi_axis, a);
  if (ax.size() > 3 || hi_axis - lo_axis + 1 != ax.size() || hi_axis + 1 != axis)
    return "the axes must be adjacent (at most three) and end right before the rows' axis, "
           "or every axis before it have one point";
  return "";
}

ffi::Error RowsImpl(ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y,
                    ffi::Span<const int64_t> axes, bool forward, double scale,
                    int64_t nthreads, int64_t axis, int64_t in_start, int64_t out_start,
                    ffi::Span<const int64_t> out_shape) {
  auto dims = x.dimensions();
  auto out_dims = out_shape.size() == 0 ? y->dimensions() : out_shape;
  size_t out_count = 1;
  for (int64_t d : out_dims) out_count *= static_cast<size_t>(d);
  if (out_count != y->element_count())
    return ffi::Error::InvalidArgument("pfft rows: out_shape does not hold the output's elements");
  if (y->element_type() != x.element_type())
    return ffi::Error::InvalidArgument("pfft rows: output type must match the input's");
  Shape ax;
  if (auto err = ResolveAxes(axes, dims.size(), ax); err.failure()) return err;
  int64_t ndim = static_cast<int64_t>(dims.size());
  int64_t r = axis < 0 ? axis + ndim : axis;
  if (r < 0 || r >= ndim) return ffi::Error::InvalidArgument("pfft rows: row axis out of range");
  Layout li = RowMajor(dims), lo = RowMajor(out_dims);
  if (lo.shape.size() != li.shape.size())
    return ffi::Error::InvalidArgument("pfft rows: input and output ranks differ");
  size_t rows = std::min(li.shape[r], lo.shape[r]);
  std::string err = RowsError(li, lo, ax, size_t(r), in_start, out_start, rows);
  if (!err.empty()) return ffi::Error::InvalidArgument("pfft rows: " + err);
  // the rows as views into the two blocks: their shape, the blocks' strides
  Layout vi = li, vo = lo;
  vi.shape[r] = vo.shape[r] = rows;
  size_t nt = static_cast<size_t>(nthreads < 0 ? 0 : nthreads);
  bool single = x.element_type() == ffi::DataType::C64;
  if (!single && x.element_type() != ffi::DataType::C128)
    return ffi::Error::InvalidArgument("pfft rows: complex64 or complex128 only");
  size_t elem = single ? 8 : 16;  // bytes of a complex element
  // the first row read and the first row written
  const char *in = static_cast<const char *>(x.untyped_data()) + in_start * li.strides[r] * elem;
  char *out = static_cast<char *>(y->untyped_data()) + out_start * lo.strides[r] * elem;
  try {
    if (single) C2C<float>(in, vi, out, vo, ax, forward, scale, nt);
    else C2C<double>(in, vi, out, vo, ax, forward, scale, nt);
  } catch (const std::exception &e) {
    return ffi::Error::Internal(std::string("pfft rows: ") + e.what());
  }
  return ffi::Error::Success();
}

// rows read where they lie into a new block; `after`: operands only waited for
ffi::Error RowsOfImpl(ffi::AnyBuffer x, ffi::RemainingArgs /*after*/,
                      ffi::Result<ffi::AnyBuffer> y, ffi::Span<const int64_t> axes,
                      bool forward, double scale, int64_t nthreads, int64_t axis,
                      int64_t in_start, int64_t out_start, ffi::Span<const int64_t> out_shape) {
  return RowsImpl(x, y, axes, forward, scale, nthreads, axis, in_start, out_start, out_shape);
}

// `into` is aliased to y: XLA has put its values there, the rows are written over them
ffi::Error RowsIntoImpl(ffi::AnyBuffer into, ffi::AnyBuffer x, ffi::RemainingArgs /*after*/,
                        ffi::Result<ffi::AnyBuffer> y, ffi::Span<const int64_t> axes,
                        bool forward, double scale, int64_t nthreads, int64_t axis,
                        int64_t in_start, int64_t out_start, ffi::Span<const int64_t> out_shape) {
  if (into.untyped_data() != y->untyped_data())
    return ffi::Error::Internal("pfft rows: the block written into is not aliased to the output");
  return RowsImpl(x, y, axes, forward, scale, nthreads, axis, in_start, out_start, out_shape);
}

// The chunk copies (common/chunk_copy.h) run by run: out of a block into a piece, or
// (`put`) from a piece back into the block.
void CopyChunks(const pfft::ChunkCopy &g, bool put, const void *from, void *to) {
  const char *src = static_cast<const char *>(from);
  char *dst = static_cast<char *>(to);
  for (long long j = 0; j < g.chunks; ++j) {
    pfft::Copy2D c = put ? g.Chunk(j).Reversed() : g.Chunk(j);
    for (long long r = 0; r < c.height; ++r)
      std::memcpy(dst + c.dst + r * c.dst_pitch, src + c.src + r * c.src_pitch,
                  static_cast<size_t>(c.width));
  }
}

// points start..start + width of every chunk, chunks first (common/chunk_copy.h)
ffi::Error TakeChunksImpl(ffi::AnyBuffer block, ffi::RemainingArgs /*after*/,
                          ffi::Result<ffi::AnyBuffer> piece,
                          int64_t outer, int64_t chunks, int64_t chunk, int64_t start,
                          int64_t width) {
  pfft::ChunkCopy g;
  std::string err = pfft::ChunkCopyOf(block, *piece, outer, chunks, chunk, start, width, g);
  if (!err.empty()) return ffi::Error::InvalidArgument("pfft chunks: " + err);
  pfft::AdviseHugePages(piece->untyped_data(), piece->size_bytes());   // a fresh buffer
  CopyChunks(g, false, block.untyped_data(), piece->untyped_data());
  return ffi::Error::Success();
}

// the piece's points written over y's chunks, the rest of y untouched
ffi::Error PutChunks(ffi::AnyBuffer piece, ffi::AnyBuffer y, int64_t outer, int64_t chunks,
                     int64_t chunk, int64_t start, int64_t width) {
  pfft::ChunkCopy g;
  std::string err = pfft::ChunkCopyOf(y, piece, outer, chunks, chunk, start, width, g);
  if (!err.empty()) return ffi::Error::InvalidArgument("pfft chunks: " + err);
  CopyChunks(g, true, piece.untyped_data(), y.untyped_data());
  return ffi::Error::Success();
}

// into a new block: y fresh (its other points written by the other pieces' puts)
ffi::Error PutChunksNewImpl(ffi::AnyBuffer piece, ffi::RemainingArgs /*after*/,
                            ffi::Result<ffi::AnyBuffer> y, int64_t outer, int64_t chunks,
                            int64_t chunk, int64_t start, int64_t width) {
  pfft::AdviseHugePages(y->untyped_data(), y->size_bytes());
  return PutChunks(piece, *y, outer, chunks, chunk, start, width);
}

// `into` is aliased to y: XLA has put its values there, the piece goes over them
ffi::Error PutChunksImpl(ffi::AnyBuffer into, ffi::AnyBuffer piece, ffi::RemainingArgs /*after*/,
                         ffi::Result<ffi::AnyBuffer> y, int64_t outer, int64_t chunks,
                         int64_t chunk, int64_t start, int64_t width) {
  if (into.untyped_data() != y->untyped_data())
    return ffi::Error::Internal("pfft chunks: the block written into is not aliased to the output");
  return PutChunks(piece, *y, outer, chunks, chunk, start, width);
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

ffi::Error R2RImpl(ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y,
                   ffi::Span<const int64_t> axes, int64_t type, bool sine, double scale,
                   int64_t nthreads) {
  auto dims = x.dimensions();
  if (y->element_type() != x.element_type() || y->dimensions().size() != dims.size())
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
XLA_FFI_DEFINE_HANDLER_SYMBOL(PfftC2C, C2CImpl,
                              PFFT_BIND.Attr<ffi::Span<const int64_t>>("shape"));
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

XLA_FFI_DEFINE_HANDLER_SYMBOL(PfftC2CRows, RowsOfImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::AnyBuffer>()
                                  .RemainingArgs()
                                  .Ret<ffi::AnyBuffer>() PFFT_ROWS_ATTRS);
XLA_FFI_DEFINE_HANDLER_SYMBOL(PfftC2CRowsInto, RowsIntoImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .RemainingArgs()
                                  .Ret<ffi::AnyBuffer>() PFFT_ROWS_ATTRS);
XLA_FFI_DEFINE_HANDLER_SYMBOL(PfftTakeChunks, TakeChunksImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::AnyBuffer>()
                                  .RemainingArgs()
                                  .Ret<ffi::AnyBuffer>() PFFT_CHUNK_ATTRS);
XLA_FFI_DEFINE_HANDLER_SYMBOL(PfftPutChunksNew, PutChunksNewImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::AnyBuffer>()
                                  .RemainingArgs()
                                  .Ret<ffi::AnyBuffer>() PFFT_CHUNK_ATTRS);
XLA_FFI_DEFINE_HANDLER_SYMBOL(PfftPutChunks, PutChunksImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .RemainingArgs()
                                  .Ret<ffi::AnyBuffer>() PFFT_CHUNK_ATTRS);

// Version of this library's calling convention, checked by pfft/engines/_kernels.py.
// 3: PfftPieces; 4: PfftR2R; 5: r2r pieces; 6: PfftPiecesPair; 7: the setters below;
// 8: the rows handlers; 9: PfftTakeChunks, the rows' out_shape, operands waited for;
// 10: operands waited for by PfftC2CRows too; 11: PfftPutChunks, operands waited for
// by PfftTakeChunks; 12: PfftC2C's `shape`; 13: PfftPutChunksNew
extern "C" int pfft_cpu_abi_version() { return 13; }

// Huge-page advice on the buffers the kernels write first (huge_pages.h): on (1, the
// default) or off (0). pfft's loader sets it from $PFFT_NO_HUGEPAGE_ADVICE; the
// library reads no environment.
extern "C" void pfft_cpu_set_hugepage_advice(int on) {
  pfft::huge_page_advice.store(on != 0, std::memory_order_relaxed);
}
#pragma GCC visibility pop
