// pfft CPU engine: one FFT pass that also unpacks and packs the pieces an exchange
// moves, so a distributed transform needs no copies of its own around a collective.
//
//   PfftPieces  one axis of a logical block that arrives as p_in pieces and leaves
//               as p_out pieces, transformed on the way: kind "c2c", "r2c" (real n
//               points -> n/2+1 bins), "c2r" (n/2+1 bins -> n real points), "r2r" (a
//               DCT or DST, n points -> n points: real, or complex as its real and
//               imaginary parts), or "copy" (no transform: the packing or unpacking
//               alone, real or complex)
//
// The logical block (rank r, leading batch dimensions allowed) is cut into equal
// chunks along one axis on each side. Every piece is a row-major array of the
// block's shape with that axis replaced by the chunk length; piece k holds chunk
//
//     c = (me + sign * k) mod p        (sign 0: c = k)
//
// so that an exchange made of cyclic shifts (shift k sends piece k to the device k
// places on) needs no reordering: sign +1 orders pieces to send, sign -1 orders
// pieces received (piece k came from the device k places back). `me` is a runtime
// int32 operand [me_in, me_out] (this device's place along each mesh axis).
//
// Operands: me (int32[2]), then the input pieces.
// Attributes:
//   weights    float64 array: empty, or for c2c, r2c and c2r one factor per bin of
//              the complex side, applied after an r2c and before a c2r or c2c; for
//              r2r the end-point weights [pre_first, pre_last, post_first,
//              post_last]: the first and last input points are multiplied by the
//              pre pair before the transform, the first and last output points by
//              the post pair after it (n = 1: the one point takes both of a pair)
//   kind       "c2c", "r2c", "c2r", "r2r" or "copy"
//   type       int64, r2r only: the DCT/DST type, 1-4 (scipy's unnormalised
//              definitions: DUCC's dct/dst with ortho=false); ignored otherwise
//   sine       bool, r2r only: true for a DST, false for a DCT; ignored otherwise
//   axis       int64, the transform axis, negative (from the end)
//   n          int64, transform length (real points for r2c/c2r/r2r; points copied
//              for copy); pieces may hold more along `axis` (padding): extra input
//              points are ignored, extra output points written as 0
//   in_split, out_split   int64, negative axis each side is cut along (ignored
//              when that side has one piece)
//   in_sign, out_sign     int64, +1, -1 or 0 as above
//   forward, scale, nthreads   as PfftC2C (unnormalised; scale fused; forward is
//              ignored by r2r and copy)
// Along any other axis the output holds as much as the input; output points past
// the input's extent (padding of an axis about to be split) are written as 0.
//
// Work: lines along `axis` are taken in batches of neighbours along the innermost
// other axis (16 when the lines are contiguous in the input, else 64, so that strided
// reads use whole cache lines; $PFFT_PIECES_BATCH overrides, up to 64), gathered from
// the input pieces into a scratch block, transformed there by DUCC (vectorised across
// the batch) and scattered to the output pieces. Each element is read once and written
// once. The output buffers get huge-page advice (huge_pages.h). An r2r pass on complex
// pieces views each complex line as two real lines (the scratch block as a real array
// with a trailing axis of 2), so DUCC transforms both parts in the same call.

#include <algorithm>
#include <complex>
#include <cstdlib>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ducc0/fft/fft.h"
#include "ducc0/fft/fftnd_impl.h"
#include "ducc0/infra/threading.h"
#include "huge_pages.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

constexpr size_t kMaxBatch = 64;

// One side (input or output): the pieces, their common shape, the cut.
struct Side {
  std::vector<char *> ptrs;
  std::vector<size_t> dims;       // of one piece
  std::vector<ptrdiff_t> strides;  // in elements
  size_t count = 1;
  int split = -1;                 // axis cut into pieces, -1 when one piece
  int64_t sign = 0, me = 0;

  size_t total(size_t a) const {
    return dims[a] * (static_cast<int>(a) == split ? count : 1);
  }
  size_t slot(size_t chunk) const {
    if (count == 1 || sign == 0) return chunk;
    int64_t k = sign > 0 ? static_cast<int64_t>(chunk) - me : me - static_cast<int64_t>(chunk);
    k %= static_cast<int64_t>(count);
    return static_cast<size_t>(k < 0 ? k + static_cast<int64_t>(count) : k);
  }
  // piece and element offset of logical coordinate `c` along axis `a`
  void locate(size_t a, size_t c, size_t &piece, ptrdiff_t &off) const {
    if (static_cast<int>(a) == split) {
      piece = slot(c / dims[a]);
      off = static_cast<ptrdiff_t>(c % dims[a]) * strides[a];
    } else {
      off = static_cast<ptrdiff_t>(c) * strides[a];
    }
  }
};

ffi::Error MakeSide(const std::vector<ffi::AnyBuffer> &bufs, int64_t split, int64_t sign,
                    int64_t me, Side &s, const char *what) {
  if (bufs.empty()) return ffi::Error::InvalidArgument(std::string("pfft pieces: no ") + what);
  auto d0 = bufs[0].dimensions();
  s.dims.assign(d0.begin(), d0.end());
  size_t r = s.dims.size();
  s.strides.assign(r, 1);
  for (size_t i = r; i-- > 1;) s.strides[i - 1] = s.strides[i] * static_cast<ptrdiff_t>(s.dims[i]);
  for (auto &b : bufs) {
    auto d = b.dimensions();
    if (d.size() != r || !std::equal(d.begin(), d.end(), s.dims.begin()) ||
        b.element_type() != bufs[0].element_type())
      return ffi::Error::InvalidArgument(std::string("pfft pieces: ") + what +
                                         " pieces differ in shape or type");
    s.ptrs.push_back(static_cast<char *>(b.untyped_data()));
  }
  s.count = bufs.size();
  int64_t a = split < 0 ? split + static_cast<int64_t>(r) : split;
  if (s.count > 1 && (a < 0 || a >= static_cast<int64_t>(r)))
    return ffi::Error::InvalidArgument(std::string("pfft pieces: ") + what + " split axis out of range");
  s.split = s.count > 1 ? static_cast<int>(a) : -1;
  if (s.count > 1 && sign != 0 && sign != 1 && sign != -1)
    return ffi::Error::InvalidArgument("pfft pieces: sign must be -1, 0 or +1");
  s.sign = sign;
  s.me = me;
  return ffi::Error::Success();
}

enum class Mode { kC2C, kR2C, kC2R, kR2R, kCopy };

// The transform of an r2r pass: DUCC's DCT (sine false) or DST of type 1-4.
struct R2RSpec {
  int type = 0;
  bool sine = false;
};

// One pass over the block: gather lines from the input pieces, transform (or not),
// scatter to the output pieces. Tin/Tout are the element types of each side; lines
// hold n_in points in and n_out out (c2c, copy, r2r: equal; r2c: n -> n/2+1; c2r:
// n/2+1 -> n). `weights` (length n_out for r2c, n_in for c2r and c2c, or empty)
// multiply the bins of the complex side: after an r2c, before a c2r or c2c; for r2r
// they are the four end-point weights (or empty).
template <typename T, typename Tin, typename Tout>
void Run(const Side &in, const Side &out, size_t f, Mode mode, size_t n_in, size_t n_out,
         bool forward, double scale, const std::vector<double> &weights, R2RSpec r2r,
         size_t nthreads) {
  using C = std::complex<T>;
  const size_t r = in.dims.size();
  // extents of the logical block, and the axes lines run over
  std::vector<size_t> extent(r), ext_out(r);
  for (size_t a = 0; a < r; ++a) {
    ext_out[a] = out.total(a);
    extent[a] = std::min(in.total(a), ext_out[a]);
  }
  std::vector<size_t> others;  // non-transform axes, outermost first
  for (size_t a = 0; a < r; ++a)
    if (a != f) others.push_back(a);
  const bool has_batch_axis = !others.empty();
  const size_t bx = has_batch_axis ? others.back() : 0;
  const size_t nb = has_batch_axis ? ext_out[bx] : 1;
  // neighbour lines per batch: enough to use whole cache lines when the axis is strided
  const char *env = std::getenv("PFFT_PIECES_BATCH");
  const size_t kBatch = env ? std::min<size_t>(kMaxBatch, std::max(1, std::atoi(env)))
                            : (in.strides[f] == 1 ? 16 : 64);
  const size_t blocks = (nb + kBatch - 1) / kBatch;
  size_t outer = 1;
  for (size_t i = 0; i + 1 < others.size(); ++i) outer *= ext_out[others[i]];
  const size_t n_tot = ext_out[f];  // points written per line (zeros past n_out)

  // along the transform axis: piece and offset of every point, each side
  std::vector<size_t> in_fp(n_in, 0), out_fp(n_tot, 0);
  std::vector<ptrdiff_t> in_fo(n_in), out_fo(n_tot);
  for (size_t t = 0; t < n_in; ++t) in.locate(f, t, in_fp[t], in_fo[t]);
  for (size_t t = 0; t < n_tot; ++t) out.locate(f, t, out_fp[t], out_fo[t]);
  const bool in_f_split = in.split == static_cast<int>(f);
  const bool out_f_split = out.split == static_cast<int>(f);
  const bool in_f_unit = in.strides[f] == 1 && !in_f_split;
  const bool out_f_unit = out.strides[f] == 1 && !out_f_split;
  // scratch: line-major when lines are contiguous in the input, else point-major
  const bool line_major = in_f_unit;
  const bool same = std::is_same<Tin, Tout>::value;  // c2c and copy: one scratch

  ducc0::execDynamic(outer * blocks, nthreads, 1, [&](ducc0::Scheduler &sched) {
    std::vector<Tin> bin(n_in * kBatch);
    std::vector<Tout> bout_own(same ? 0 : n_out * kBatch);
    Tout *bout = same ? reinterpret_cast<Tout *>(bin.data()) : bout_own.data();
    const size_t ldi = line_major ? n_in : kBatch, ldo = line_major ? n_out : kBatch;
    auto in_at = [&](size_t b, size_t t) -> Tin & {
      return line_major ? bin[b * n_in + t] : bin[t * kBatch + b];
    };
    auto out_at = [&](size_t b, size_t t) -> Tout & {
      return line_major ? bout[b * n_out + t] : bout[t * kBatch + b];
    };
    std::vector<size_t> coord(r, 0);
    size_t in_piece[kMaxBatch], out_piece[kMaxBatch];
    ptrdiff_t in_base[kMaxBatch], out_base[kMaxBatch];
    bool valid[kMaxBatch];
    while (auto range = sched.getNext()) {
      for (size_t item = range.lo; item < range.hi; ++item) {
        size_t blk = item % blocks, rest = item / blocks;
        for (size_t i = others.size() >= 2 ? others.size() - 1 : 0; i-- > 0;) {
          size_t a = others[i];
          coord[a] = rest % ext_out[a];
          rest /= ext_out[a];
        }
        size_t b0 = blk * kBatch, nl = std::min(kBatch, nb - b0);
        // per line: piece and base offset on each side, and whether it has data
        for (size_t b = 0; b < nl; ++b) {
          if (has_batch_axis) coord[bx] = b0 + b;
          size_t ip = 0, op = 0;
          ptrdiff_t ib = 0, ob = 0;
          bool ok = true;
          for (size_t a : others) {
            size_t p;
            ptrdiff_t o;
            if (coord[a] >= extent[a]) ok = false;
            if (ok) {
              p = 0;
              in.locate(a, coord[a], p, o);
              if (static_cast<int>(a) == in.split) ip = p;
              ib += o;
            }
            p = 0;
            out.locate(a, coord[a], p, o);
            if (static_cast<int>(a) == out.split) op = p;
            ob += o;
          }
          in_piece[b] = ip, out_piece[b] = op, in_base[b] = ib, out_base[b] = ob, valid[b] = ok;
        }
        size_t nv = 0;  // lines with data: a prefix (padding lies past the data)
        while (nv < nl && valid[nv]) ++nv;
        bool in_contig = true, out_contig = true;  // neighbours one element apart
        for (size_t b = 1; b < nv; ++b)
          in_contig &= in_piece[b] == in_piece[0] && in_base[b] == in_base[0] + ptrdiff_t(b);
        for (size_t b = 1; b < nl; ++b)
          out_contig &= out_piece[b] == out_piece[0] && out_base[b] == out_base[0] + ptrdiff_t(b);
        // gather
        if (line_major) {
          for (size_t b = 0; b < nv; ++b)
            std::copy_n(reinterpret_cast<const Tin *>(in.ptrs[in_piece[b]]) + in_base[b], n_in,
                        &bin[b * n_in]);
        } else {
          for (size_t t = 0; t < n_in; ++t) {
            Tin *row = &bin[t * kBatch];
            if (in_contig) {
              size_t p = in_f_split ? in_fp[t] : in_piece[0];
              std::copy_n(reinterpret_cast<const Tin *>(in.ptrs[p]) + in_base[0] + in_fo[t], nv,
                          row);
            } else {
              for (size_t b = 0; b < nv; ++b) {
                size_t p = in_f_split ? in_fp[t] : in_piece[b];
                row[b] = reinterpret_cast<const Tin *>(in.ptrs[p])[in_base[b] + in_fo[t]];
              }
            }
          }
        }
        // transform
        if (nv > 0 && mode == Mode::kR2R) {
          if constexpr (std::is_same<Tin, Tout>::value) {
            if (!weights.empty())
              for (size_t b = 0; b < nv; ++b) {
                in_at(b, 0) *= static_cast<T>(weights[0]);
                in_at(b, n_in - 1) *= static_cast<T>(weights[1]);
              }
            // a complex line is two real lines: the scratch as a real array with a
            // trailing axis of 2 (of 1 for real data)
            constexpr size_t parts = sizeof(Tin) / sizeof(T);
            const size_t ax = line_major ? 1 : 0;
            auto shape = line_major ? ducc0::fmav_info::shape_t{nv, n_in, parts}
                                    : ducc0::fmav_info::shape_t{n_in, nv, parts};
            ducc0::fmav_info::stride_t str{ptrdiff_t(ldi * parts), ptrdiff_t(parts), 1};
            T *raw = reinterpret_cast<T *>(bin.data());
            ducc0::cfmav<T> src(raw, shape, str);
            ducc0::vfmav<T> dst(raw, shape, str);
            if (r2r.sine)
              ducc0::dst(src, dst, {ax}, r2r.type, static_cast<T>(scale), false, 1);
            else
              ducc0::dct(src, dst, {ax}, r2r.type, static_cast<T>(scale), false, 1);
            if (!weights.empty())
              for (size_t b = 0; b < nv; ++b) {
                out_at(b, 0) *= static_cast<T>(weights[2]);
                out_at(b, n_out - 1) *= static_cast<T>(weights[3]);
              }
          }
        } else if (nv > 0 && mode != Mode::kCopy) {
          if (!weights.empty() && mode != Mode::kR2C)
            for (size_t b = 0; b < nv; ++b)
              for (size_t t = 0; t < n_in; ++t) in_at(b, t) *= static_cast<T>(weights[t]);
          auto shape_in = line_major ? ducc0::fmav_info::shape_t{nv, n_in}
                                     : ducc0::fmav_info::shape_t{n_in, nv};
          auto shape_out = line_major ? ducc0::fmav_info::shape_t{nv, n_out}
                                      : ducc0::fmav_info::shape_t{n_out, nv};
          ducc0::cfmav<Tin> src(bin.data(), shape_in, {ptrdiff_t(ldi), ptrdiff_t(1)});
          ducc0::vfmav<Tout> dst(bout, shape_out, {ptrdiff_t(ldo), ptrdiff_t(1)});
          const size_t ax = line_major ? 1 : 0;
          if constexpr (std::is_same<Tin, C>::value && std::is_same<Tout, C>::value)
            ducc0::c2c(src, dst, {ax}, forward, static_cast<T>(scale), 1);
          else if constexpr (std::is_same<Tin, T>::value && std::is_same<Tout, C>::value)
            ducc0::r2c(src, dst, {ax}, forward, static_cast<T>(scale), 1);
          else if constexpr (std::is_same<Tin, C>::value && std::is_same<Tout, T>::value)
            ducc0::c2r(src, dst, {ax}, forward, static_cast<T>(scale), 1);
          if (!weights.empty() && mode == Mode::kR2C)
            for (size_t b = 0; b < nv; ++b)
              for (size_t t = 0; t < n_out; ++t) out_at(b, t) *= static_cast<T>(weights[t]);
        } else if (nv > 0 && scale != 1.0) {
          for (size_t b = 0; b < nv; ++b)
            for (size_t t = 0; t < n_out; ++t) out_at(b, t) *= static_cast<T>(scale);
        }
        // scatter (zeros past n_out and on padding lines)
        const Tout zero(0);
        if (out_f_unit) {
          for (size_t b = 0; b < nl; ++b) {
            Tout *dst = reinterpret_cast<Tout *>(out.ptrs[out_piece[b]]) + out_base[b];
            if (b >= nv) {
              std::fill_n(dst, n_tot, zero);
            } else if (line_major) {
              std::copy_n(&bout[b * n_out], n_out, dst);
              std::fill_n(dst + n_out, n_tot - n_out, zero);
            } else {
              for (size_t t = 0; t < n_out; ++t) dst[t] = bout[t * kBatch + b];
              std::fill_n(dst + n_out, n_tot - n_out, zero);
            }
          }
        } else {
          for (size_t t = 0; t < n_tot; ++t) {
            if (out_contig) {
              size_t p = out_f_split ? out_fp[t] : out_piece[0];
              Tout *dst = reinterpret_cast<Tout *>(out.ptrs[p]) + out_base[0] + out_fo[t];
              if (t >= n_out) {
                std::fill_n(dst, nl, zero);
              } else if (!line_major) {
                std::copy_n(&bout[t * kBatch], nv, dst);
                std::fill_n(dst + nv, nl - nv, zero);
              } else {
                for (size_t b = 0; b < nv; ++b) dst[b] = out_at(b, t);
                std::fill_n(dst + nv, nl - nv, zero);
              }
            } else {
              for (size_t b = 0; b < nl; ++b) {
                size_t p = out_f_split ? out_fp[t] : out_piece[b];
                reinterpret_cast<Tout *>(out.ptrs[p])[out_base[b] + out_fo[t]] =
                    (b < nv && t < n_out) ? out_at(b, t) : zero;
              }
            }
          }
        }
      }
    }
  });
}

ffi::Error PiecesImpl(ffi::Buffer<ffi::S32> me, ffi::RemainingArgs args,
                      ffi::RemainingRets rets, ffi::Span<const double> weights,
                      std::string_view kind, int64_t type, bool sine,
                      int64_t axis, int64_t n, int64_t in_split, int64_t in_sign,
                      int64_t out_split, int64_t out_sign, bool forward, double scale,
                      int64_t nthreads) {
  if (me.element_count() < 2)
    return ffi::Error::InvalidArgument("pfft pieces: `me` must hold [me_in, me_out]");
  const int32_t *mev = me.typed_data();
  std::vector<ffi::AnyBuffer> ins, outs;
  for (size_t i = 0; i < args.size(); ++i) {
    auto b = args.get<ffi::AnyBuffer>(i);
    if (b.has_error()) return b.error();
    ins.push_back(*b);
  }
  for (size_t i = 0; i < rets.size(); ++i) {
    auto b = rets.get<ffi::AnyBuffer>(i);
    if (b.has_error()) return b.error();
    outs.push_back(**b);
  }
  if (ins.empty() || outs.empty())
    return ffi::Error::InvalidArgument("pfft pieces: needs input and output pieces");
  Mode mode;
  if (kind == "c2c") mode = Mode::kC2C;
  else if (kind == "r2c") mode = Mode::kR2C;
  else if (kind == "c2r") mode = Mode::kC2R;
  else if (kind == "r2r") mode = Mode::kR2R;
  else if (kind == "copy") mode = Mode::kCopy;
  else
    return ffi::Error::InvalidArgument(
        "pfft pieces: kind must be c2c, r2c, c2r, r2r or copy");
  R2RSpec r2r;
  if (mode == Mode::kR2R) {
    if (type < 1 || type > 4)
      return ffi::Error::InvalidArgument("pfft pieces: r2r type must be 1, 2, 3 or 4");
    if (type == 1 && !sine && n < 2)
      return ffi::Error::InvalidArgument("pfft pieces: a DCT-I needs at least 2 points");
    r2r.type = static_cast<int>(type);
    r2r.sine = sine;
  }
  Side in, out;
  if (auto e = MakeSide(ins, in_split, in_sign, mev[0], in, "input"); e.failure()) return e;
  if (auto e = MakeSide(outs, out_split, out_sign, mev[1], out, "output"); e.failure())
    return e;
  size_t r = in.dims.size();
  if (out.dims.size() != r) return ffi::Error::InvalidArgument("pfft pieces: ranks differ");
  int64_t f = axis < 0 ? axis + static_cast<int64_t>(r) : axis;
  if (f < 0 || f >= static_cast<int64_t>(r))
    return ffi::Error::InvalidArgument("pfft pieces: axis out of range");
  size_t fa = static_cast<size_t>(f);
  size_t half = static_cast<size_t>(n) / 2 + 1;
  size_t n_in = mode == Mode::kC2R ? half : static_cast<size_t>(n);
  size_t n_out = mode == Mode::kR2C ? half : static_cast<size_t>(n);
  if (n < 1 || n_in > in.total(fa) || n_out > out.total(fa))
    return ffi::Error::InvalidArgument("pfft pieces: n exceeds the pieces along the axis");
  std::vector<double> w(weights.begin(), weights.end());
  if (mode == Mode::kR2R && !w.empty() && w.size() != 4)
    return ffi::Error::InvalidArgument(
        "pfft pieces: r2r weights must be [pre_first, pre_last, post_first, post_last]");
  if (mode != Mode::kR2R && !w.empty() &&
      (mode == Mode::kCopy || w.size() != (mode == Mode::kR2C ? n_out : n_in)))
    return ffi::Error::InvalidArgument("pfft pieces: weights must have one entry per bin");
  auto ti = ins[0].element_type(), to = outs[0].element_type();
  using ffi::DataType;
  bool c2c_like = mode == Mode::kC2C || mode == Mode::kCopy || mode == Mode::kR2R;
  bool same_real = mode == Mode::kCopy || mode == Mode::kR2R;
  size_t nt = static_cast<size_t>(nthreads < 1 ? 1 : nthreads);
  for (auto &b : outs) pfft::AdviseHugePages(b.untyped_data(), b.size_bytes());
  try {
    if (c2c_like && ti == DataType::C64 && to == DataType::C64)
      Run<float, std::complex<float>, std::complex<float>>(in, out, fa, mode, n_in, n_out,
                                                           forward, scale, w, r2r, nt);
    else if (c2c_like && ti == DataType::C128 && to == DataType::C128)
      Run<double, std::complex<double>, std::complex<double>>(in, out, fa, mode, n_in, n_out,
                                                              forward, scale, w, r2r, nt);
    else if (same_real && ti == DataType::F32 && to == DataType::F32)
      Run<float, float, float>(in, out, fa, mode, n_in, n_out, forward, scale, w, r2r, nt);
    else if (same_real && ti == DataType::F64 && to == DataType::F64)
      Run<double, double, double>(in, out, fa, mode, n_in, n_out, forward, scale, w, r2r,
                                  nt);
    else if (mode == Mode::kR2C && ti == DataType::F32 && to == DataType::C64)
      Run<float, float, std::complex<float>>(in, out, fa, mode, n_in, n_out, forward, scale,
                                             w, r2r, nt);
    else if (mode == Mode::kR2C && ti == DataType::F64 && to == DataType::C128)
      Run<double, double, std::complex<double>>(in, out, fa, mode, n_in, n_out, forward, scale,
                                                w, r2r, nt);
    else if (mode == Mode::kC2R && ti == DataType::C64 && to == DataType::F32)
      Run<float, std::complex<float>, float>(in, out, fa, mode, n_in, n_out, forward, scale,
                                             w, r2r, nt);
    else if (mode == Mode::kC2R && ti == DataType::C128 && to == DataType::F64)
      Run<double, std::complex<double>, double>(in, out, fa, mode, n_in, n_out, forward, scale,
                                                w, r2r, nt);
    else
      return ffi::Error::InvalidArgument(
          "pfft pieces: element types do not fit the kind (c2c: complex64 or complex128 "
          "both sides; copy and r2r: the same type both sides; r2c: float -> complex; "
          "c2r: complex -> float)");
  } catch (const std::exception &e) {
    return ffi::Error::Internal(std::string("pfft pieces: ") + e.what());
  }
  return ffi::Error::Success();
}

}  // namespace

#pragma GCC visibility push(default)
XLA_FFI_DEFINE_HANDLER_SYMBOL(PfftPieces, PiecesImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::S32>>()
                                  .RemainingArgs()
                                  .RemainingRets()
                                  .Attr<ffi::Span<const double>>("weights")
                                  .Attr<std::string_view>("kind")
                                  .Attr<int64_t>("type")
                                  .Attr<bool>("sine")
                                  .Attr<int64_t>("axis")
                                  .Attr<int64_t>("n")
                                  .Attr<int64_t>("in_split")
                                  .Attr<int64_t>("in_sign")
                                  .Attr<int64_t>("out_split")
                                  .Attr<int64_t>("out_sign")
                                  .Attr<bool>("forward")
                                  .Attr<double>("scale")
                                  .Attr<int64_t>("nthreads"));
#pragma GCC visibility pop
